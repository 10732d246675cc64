//go:build !purego

#include "textflag.h"

// func expAVX512(dst, x []float64) int
//
// expAVX2 on zmm registers: eight at a time, the same operations in the same
// order (so results equal the generic twin's bit for bit), AVX-512F only
// (integer and, mask-register forms where AVX2 used the floating-point and,
// movmsk and an all-ones gather mask). Same contract: it returns how many
// elements it did, stopping before the last partial block and before any
// block holding a NaN or an |x| > expFastMax; each block is loaded before it
// is stored, so dst may alias x.
TEXT ·expAVX512(SB), NOSPLIT, $0-56
	MOVQ         dst_base+0(FP), DI
	MOVQ         x_base+24(FP), SI
	MOVQ         x_len+32(FP), CX
	LEAQ         ·expTab(SB), R8
	LEAQ         ·expConsts(SB), R9
	VPBROADCASTQ 0(R9), Z15    // |x| mask
	VBROADCASTSD 32(R9), Z14   // expFastMax
	VBROADCASTSD 64(R9), Z13   // 64/ln2
	VBROADCASTSD 96(R9), Z12   // shift
	VBROADCASTSD 128(R9), Z11  // ln2hi/64
	VBROADCASTSD 160(R9), Z10  // ln2lo/64
	VPBROADCASTQ 192(R9), Z9   // 63
	VBROADCASTSD 224(R9), Z16  // c2
	VBROADCASTSD 256(R9), Z17  // c3
	VBROADCASTSD 288(R9), Z18  // c4
	VBROADCASTSD 320(R9), Z19  // c5
	XORQ         AX, AX
	ANDQ         $-8, CX
	JZ           done

loop:
	VMOVUPD  (SI)(AX*8), Z0
	VPANDQ   Z15, Z0, Z1
	VCMPPD   $6, Z14, Z1, K1 // !(|x| <= expFastMax): NaN or out of the fast range
	KORTESTW K1, K1
	JNZ      done

	VMOVAPD      Z12, Z2
	VFMADD231PD  Z13, Z0, Z2 // z = x*64/ln2 + shift
	VSUBPD       Z12, Z2, Z3 // kd = z - shift
	VMOVAPD      Z0, Z4
	VFNMADD231PD Z11, Z3, Z4 // r = x - kd*ln2hi/64
	VFNMADD231PD Z10, Z3, Z4 // r -= kd*ln2lo/64

	VPANDQ     Z9, Z2, Z5             // j = bits(z) & 63
	KXNORW     K2, K2, K2             // gather mask: all lanes
	VPGATHERQQ (R8)(Z5*8), K2, Z7     // expTab[j]
	VPSLLQ     $46, Z2, Z8
	VPADDQ     Z8, Z7, Z7             // s = 2^(k>>6) * 2^(j/64)

	VMOVAPD     Z18, Z1     // c4
	VFMADD231PD Z19, Z4, Z1 // q = c5*r + c4
	VFMADD213PD Z17, Z4, Z1 // q = q*r + c3
	VFMADD213PD Z16, Z4, Z1 // q = q*r + c2
	VMULPD      Z4, Z4, Z5  // r2
	VFMADD213PD Z4, Z5, Z1  // p = q*r2 + r
	VFMADD213PD Z7, Z7, Z1  // s*p + s
	VMOVUPD     Z1, (DI)(AX*8)
	ADDQ        $8, AX
	CMPQ        AX, CX
	JL          loop

done:
	VZEROUPPER
	MOVQ AX, ret+48(FP)
	RET
