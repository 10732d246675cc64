//go:build !purego

#include "textflag.h"

// func dotUnitaryAVX2(x, y []float64) float64
//
// Four independent 4-wide accumulators hide the FMA latency; the tail runs
// 4 at a time, then one at a time.
TEXT ·dotUnitaryAVX2(SB), NOSPLIT, $0-56
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	MOVQ y_base+24(FP), DI
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	XORQ AX, AX
	MOVQ CX, DX
	ANDQ $-16, DX
	JZ   quad

loop16:
	VMOVUPD     (SI)(AX*8), Y4
	VMOVUPD     32(SI)(AX*8), Y5
	VMOVUPD     64(SI)(AX*8), Y6
	VMOVUPD     96(SI)(AX*8), Y7
	VFMADD231PD (DI)(AX*8), Y4, Y0
	VFMADD231PD 32(DI)(AX*8), Y5, Y1
	VFMADD231PD 64(DI)(AX*8), Y6, Y2
	VFMADD231PD 96(DI)(AX*8), Y7, Y3
	ADDQ        $16, AX
	CMPQ        AX, DX
	JL          loop16

quad:
	MOVQ CX, DX
	ANDQ $-4, DX
	CMPQ AX, DX
	JGE  reduce

loop4:
	VMOVUPD     (SI)(AX*8), Y4
	VFMADD231PD (DI)(AX*8), Y4, Y0
	ADDQ        $4, AX
	CMPQ        AX, DX
	JL          loop4

reduce:
	VADDPD       Y1, Y0, Y0
	VADDPD       Y3, Y2, Y2
	VADDPD       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VUNPCKHPD    X0, X0, X1
	VADDSD       X1, X0, X0
	CMPQ         AX, CX
	JGE          done

loop1:
	VMOVSD      (SI)(AX*8), X4
	VFMADD231SD (DI)(AX*8), X4, X0
	INCQ        AX
	CMPQ        AX, CX
	JL          loop1

done:
	VZEROUPPER
	MOVSD X0, ret+48(FP)
	RET

// func dotIncAVX2(x, y []float64, n, incX, incY, ix, iy uintptr) float64
//
// Strided elements cannot be loaded as vectors (gathers are slower than
// scalar loads on current cores: an AVX-512 version gathering eight at a
// time ran at the speed of the two-accumulator loop this replaced on Zen 5),
// so this is a scalar FMA loop unrolled by four into four accumulators, as
// many as hide the FMA latency (1.8× the two-accumulator loop, Zen 5).
// Increments are byte-scaled with wrap-around, so negative ones (passed as
// uintptr) work unchanged.
TEXT ·dotIncAVX2(SB), NOSPLIT, $0-96
	MOVQ x_base+0(FP), SI
	MOVQ y_base+24(FP), DI
	MOVQ n+48(FP), CX
	MOVQ incX+56(FP), R8
	MOVQ incY+64(FP), R9
	MOVQ ix+72(FP), AX
	MOVQ iy+80(FP), BX
	LEAQ (SI)(AX*8), SI
	LEAQ (DI)(BX*8), DI
	SHLQ $3, R8
	SHLQ $3, R9
	VXORPD X0, X0, X0
	VXORPD X1, X1, X1
	VXORPD X4, X4, X4
	VXORPD X5, X5, X5
	MOVQ CX, DX
	SHRQ $2, DX
	JZ   tail

loop4:
	VMOVSD      (SI), X2
	VFMADD231SD (DI), X2, X0
	ADDQ        R8, SI
	ADDQ        R9, DI
	VMOVSD      (SI), X3
	VFMADD231SD (DI), X3, X1
	ADDQ        R8, SI
	ADDQ        R9, DI
	VMOVSD      (SI), X2
	VFMADD231SD (DI), X2, X4
	ADDQ        R8, SI
	ADDQ        R9, DI
	VMOVSD      (SI), X3
	VFMADD231SD (DI), X3, X5
	ADDQ        R8, SI
	ADDQ        R9, DI
	DECQ        DX
	JNZ         loop4

tail:
	ANDQ $3, CX
	JZ   done

loop1:
	VMOVSD      (SI), X2
	VFMADD231SD (DI), X2, X0
	ADDQ        R8, SI
	ADDQ        R9, DI
	DECQ        CX
	JNZ         loop1

done:
	VADDSD X1, X0, X0
	VADDSD X5, X4, X4
	VADDSD X4, X0, X0
	MOVSD  X0, ret+88(FP)
	RET
