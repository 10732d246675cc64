//go:build !purego

#include "textflag.h"

// func dotUnitaryAVX512(x, y []float64) float64
//
// Eight independent 8-wide accumulators (64 elements per iteration) keep
// both load ports and the FMA latency busy; then 8 at a time, then the last
// 1..7 elements by one masked FMA (masked-off lanes are neither read nor
// faulted on, so no element outside x[:n] or y[:n] is touched).
TEXT ·dotUnitaryAVX512(SB), NOSPLIT, $0-56
	MOVQ   x_base+0(FP), SI
	MOVQ   x_len+8(FP), CX
	MOVQ   y_base+24(FP), DI
	VXORPD Z0, Z0, Z0
	VXORPD Z1, Z1, Z1
	VXORPD Z2, Z2, Z2
	VXORPD Z3, Z3, Z3
	VXORPD Z4, Z4, Z4
	VXORPD Z5, Z5, Z5
	VXORPD Z6, Z6, Z6
	VXORPD Z7, Z7, Z7
	XORQ   AX, AX
	MOVQ   CX, DX
	ANDQ   $-64, DX
	JZ     oct

loop64:
	VMOVUPD     (SI)(AX*8), Z8
	VMOVUPD     64(SI)(AX*8), Z9
	VMOVUPD     128(SI)(AX*8), Z10
	VMOVUPD     192(SI)(AX*8), Z11
	VMOVUPD     256(SI)(AX*8), Z12
	VMOVUPD     320(SI)(AX*8), Z13
	VMOVUPD     384(SI)(AX*8), Z14
	VMOVUPD     448(SI)(AX*8), Z15
	VFMADD231PD (DI)(AX*8), Z8, Z0
	VFMADD231PD 64(DI)(AX*8), Z9, Z1
	VFMADD231PD 128(DI)(AX*8), Z10, Z2
	VFMADD231PD 192(DI)(AX*8), Z11, Z3
	VFMADD231PD 256(DI)(AX*8), Z12, Z4
	VFMADD231PD 320(DI)(AX*8), Z13, Z5
	VFMADD231PD 384(DI)(AX*8), Z14, Z6
	VFMADD231PD 448(DI)(AX*8), Z15, Z7
	ADDQ        $64, AX
	CMPQ        AX, DX
	JL          loop64

oct:
	MOVQ CX, DX
	ANDQ $-8, DX
	CMPQ AX, DX
	JGE  tail

loop8:
	VMOVUPD     (SI)(AX*8), Z8
	VFMADD231PD (DI)(AX*8), Z8, Z0
	ADDQ        $8, AX
	CMPQ        AX, DX
	JL          loop8

tail:
	SUBQ AX, CX          // 0..7 elements left at AX
	JZ   reduce
	MOVL $1, BX
	SHLL CX, BX
	DECL BX
	KMOVW BX, K1
	VMOVUPD.Z   (SI)(AX*8), K1, Z8
	VFMADD231PD (DI)(AX*8), Z8, K1, Z1

reduce:
	VADDPD        Z4, Z0, Z0
	VADDPD        Z5, Z1, Z1
	VADDPD        Z6, Z2, Z2
	VADDPD        Z7, Z3, Z3
	VADDPD        Z1, Z0, Z0
	VADDPD        Z3, Z2, Z2
	VADDPD        Z2, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPD        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VADDPD        X1, X0, X0
	VUNPCKHPD     X0, X0, X1
	VADDSD        X1, X0, X0
	VZEROUPPER
	MOVSD         X0, ret+48(FP)
	RET
