//go:build !purego

#include "textflag.h"

// func expAVX512(dst, x []float64) int
//
// Computes dst[i] = exp(x[i]) for every i < len(x), eight at a time, by the
// method of exp_generic.go with the same operations in the same order, so
// results equal the generic twin's bit for bit, and returns len(x) (the
// contract of expBlocks: how many elements it did). Unlike the AVX2 kernel
// it never leaves work to Go:
//
//   - the 64-entry table lives in eight zmm registers and is read with four
//     two-register permutes and two blends instead of a gather;
//   - the last 1..7 elements are one masked block (masked-off lanes are
//     neither read nor written, and load as 0, which is on the fast path);
//   - a block holding a NaN or an |x| > expFastMax takes the expSpecial
//     route for all eight lanes: t*(1+p) scaled by 2^(k>>6) with VSCALEFPD,
//     one correctly rounded multiplication as math.Ldexp does (identical on
//     the fast-path lanes too, where the scaling is exact), then +Inf above
//     expOverflow, 0 below expUnderflow and x itself for a NaN.
//
// Each block is loaded completely before it is stored, so dst may alias x.
//
// expConsts rows (32 bytes each): 0 |x| mask, 1 expFastMax, 2 64/ln2,
// 3 shift, 4 ln2hi/64, 5 ln2lo/64, 6 j mask, 7..10 c2..c5;
// expSpecialConsts: 0 1/64, 1 expOverflow, 2 expUnderflow, 3 +Inf, 4 16, 5 32.

// EXP_CORE: from x in Z0, z in Z2, kd in Z3, j in Z5, expTab[j] in Z6 and
// p = exp(r)-1 in Z1 (r in Z4, r*r in Z23; Z7, Z8, Z22 clobbered).
#define EXP_CORE \
	VMOVAPD      Z12, Z2        \
	VFMADD231PD  Z13, Z0, Z2    \
	VSUBPD       Z12, Z2, Z3    \
	VMOVAPD      Z0, Z4         \
	VFNMADD231PD Z11, Z3, Z4    \
	VFNMADD231PD Z10, Z3, Z4    \
	VPANDQ       Z9, Z2, Z5     \
	VMOVDQA64    Z5, Z6         \
	VPERMI2PD    Z25, Z24, Z6   \
	VMOVDQA64    Z5, Z7         \
	VPERMI2PD    Z27, Z26, Z7   \
	VMOVDQA64    Z5, Z8         \
	VPERMI2PD    Z29, Z28, Z8   \
	VMOVDQA64    Z5, Z22        \
	VPERMI2PD    Z31, Z30, Z22  \
	VPTESTMQ     Z20, Z5, K3    \
	VPTESTMQ     Z21, Z5, K4    \
	VMOVAPD      Z7, K3, Z6     \
	VMOVAPD      Z22, K3, Z8    \
	VMOVAPD      Z8, K4, Z6     \
	VMOVAPD      Z18, Z1        \
	VFMADD231PD  Z19, Z4, Z1    \
	VFMADD213PD  Z17, Z4, Z1    \
	VFMADD213PD  Z16, Z4, Z1    \
	VMULPD       Z4, Z4, Z23    \
	VFMADD213PD  Z4, Z23, Z1

// EXP_FAST: after EXP_CORE, exp(x) in Z1 for lanes with |x| <= expFastMax:
// s = expTab[j] + bits(z)<<46 = 2^(k>>6) * 2^(j/64), then s*p + s.
#define EXP_FAST \
	VPSLLQ      $46, Z2, Z8  \
	VPADDQ      Z8, Z6, Z6   \
	VFMADD213PD Z6, Z6, Z1

// EXP_SPECIAL: after EXP_CORE, exp(x) in Z1 for every lane (expSpecial):
// t = expTab[j] + j<<46 = 2^(j/64), (t*p + t) * 2^floor(kd/64), then the
// overflow, underflow and NaN lanes replaced (K2 clobbered).
#define EXP_SPECIAL \
	VPSLLQ           $46, Z5, Z8       \
	VPADDQ           Z8, Z6, Z6        \
	VFMADD213PD      Z6, Z6, Z1        \
	VMULPD.BCST      0(R10), Z3, Z7    \
	VSCALEFPD        Z7, Z1, Z1        \
	VCMPPD.BCST      $0x1e, 8(R10), Z0, K2 \
	VBROADCASTSD     24(R10), K2, Z1   \
	VCMPPD.BCST      $0x11, 16(R10), Z0, K2 \
	VPXORQ           Z1, Z1, K2, Z1    \
	VCMPPD           $3, Z0, Z0, K2    \
	VMOVAPD          Z0, K2, Z1

// EXP_CHECK: K1 = lanes of Z0 that are NaN or have |x| > expFastMax.
#define EXP_CHECK \
	VPANDQ   Z15, Z0, Z1      \
	VCMPPD   $6, Z14, Z1, K1  \
	KORTESTW K1, K1

TEXT ·expAVX512(SB), NOSPLIT, $0-56
	MOVQ         dst_base+0(FP), DI
	MOVQ         x_base+24(FP), SI
	MOVQ         x_len+32(FP), CX
	MOVQ         CX, ret+48(FP) // every element is done
	LEAQ         ·expTab(SB), R8
	LEAQ         ·expConsts(SB), R9
	LEAQ         ·expSpecialConsts(SB), R10
	VMOVDQU64    0(R8), Z24 // expTab[0:8]
	VMOVDQU64    64(R8), Z25
	VMOVDQU64    128(R8), Z26
	VMOVDQU64    192(R8), Z27
	VMOVDQU64    256(R8), Z28
	VMOVDQU64    320(R8), Z29
	VMOVDQU64    384(R8), Z30
	VMOVDQU64    448(R8), Z31 // expTab[56:64]
	VPBROADCASTQ 0(R9), Z15   // |x| mask
	VBROADCASTSD 32(R9), Z14  // expFastMax
	VBROADCASTSD 64(R9), Z13  // 64/ln2
	VBROADCASTSD 96(R9), Z12  // shift
	VBROADCASTSD 128(R9), Z11 // ln2hi/64
	VBROADCASTSD 160(R9), Z10 // ln2lo/64
	VPBROADCASTQ 192(R9), Z9  // 63
	VBROADCASTSD 224(R9), Z16 // c2
	VBROADCASTSD 256(R9), Z17 // c3
	VBROADCASTSD 288(R9), Z18 // c4
	VBROADCASTSD 320(R9), Z19 // c5
	VPBROADCASTQ 32(R10), Z20 // 16: bit 4 of j
	VPBROADCASTQ 40(R10), Z21 // 32: bit 5 of j
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $-8, DX
	JZ           tail

loop:
	VMOVUPD (SI)(AX*8), Z0
	EXP_CHECK
	JNZ     special
	EXP_CORE
	EXP_FAST
	VMOVUPD Z1, (DI)(AX*8)

next:
	ADDQ $8, AX
	CMPQ AX, DX
	JL   loop

tail:
	SUBQ  AX, CX // 0..7 elements left at AX
	JZ    done
	MOVL  $1, BX
	SHLL  CX, BX
	DECL  BX
	KMOVW BX, K7
	VMOVUPD.Z (SI)(AX*8), K7, Z0
	EXP_CHECK
	JNZ   tailspecial
	EXP_CORE
	EXP_FAST
	VMOVUPD Z1, K7, (DI)(AX*8)

done:
	VZEROUPPER
	RET

special:
	EXP_CORE
	EXP_SPECIAL
	VMOVUPD Z1, (DI)(AX*8)
	JMP     next

tailspecial:
	EXP_CORE
	EXP_SPECIAL
	VMOVUPD Z1, K7, (DI)(AX*8)
	JMP     done
