//go:build !purego

#include "textflag.h"

// func expAVX2(dst, x []float64) int
//
// Computes dst[i] = exp(x[i]) four at a time, by the method described in
// exp_generic.go and with the same operations in the same order (so results
// equal the generic twin's bit for bit). It returns how many elements it
// did: it stops before the last partial block and before any block holding
// a NaN or an |x| > expFastMax, which the Go caller (expBlocks) finishes.
// Each block is loaded completely before it is stored, so dst may alias x.
//
// expConsts rows (32 bytes each): 0 |x| mask, 1 expFastMax, 2 64/ln2,
// 3 shift, 4 ln2hi/64, 5 ln2lo/64, 6 j mask, 7..10 c2..c5.
TEXT ·expAVX2(SB), NOSPLIT, $0-56
	MOVQ    dst_base+0(FP), DI
	MOVQ    x_base+24(FP), SI
	MOVQ    x_len+32(FP), CX
	LEAQ    ·expTab(SB), R8
	LEAQ    ·expConsts(SB), R9
	VMOVDQU 0(R9), Y15   // |x| mask
	VMOVUPD 32(R9), Y14  // expFastMax
	VMOVUPD 64(R9), Y13  // 64/ln2
	VMOVUPD 96(R9), Y12  // shift
	VMOVUPD 128(R9), Y11 // ln2hi/64
	VMOVUPD 160(R9), Y10 // ln2lo/64
	VMOVDQU 192(R9), Y9  // 63
	XORQ    AX, AX
	ANDQ    $-4, CX
	JZ      done

loop:
	VMOVUPD   (SI)(AX*8), Y0
	VANDPD    Y15, Y0, Y1
	VCMPPD    $6, Y14, Y1, Y1 // !(|x| <= expFastMax): NaN or out of the fast range
	VMOVMSKPD Y1, BX
	TESTQ     BX, BX
	JNZ       done

	VMOVAPD      Y12, Y2
	VFMADD231PD  Y13, Y0, Y2  // z = x*64/ln2 + shift
	VSUBPD       Y12, Y2, Y3  // kd = z - shift
	VMOVAPD      Y0, Y4
	VFNMADD231PD Y11, Y3, Y4  // r = x - kd*ln2hi/64
	VFNMADD231PD Y10, Y3, Y4  // r -= kd*ln2lo/64

	VPAND        Y9, Y2, Y5   // j = bits(z) & 63
	VPCMPEQQ     Y6, Y6, Y6   // gather mask: all lanes
	VPGATHERQQ   Y6, (R8)(Y5*8), Y7 // expTab[j]
	VPSLLQ       $46, Y2, Y8
	VPADDQ       Y8, Y7, Y7   // s = 2^(k>>6) * 2^(j/64)

	VMOVUPD      288(R9), Y1  // c4
	VFMADD231PD  320(R9), Y4, Y1 // q = c5*r + c4
	VFMADD213PD  256(R9), Y4, Y1 // q = q*r + c3
	VFMADD213PD  224(R9), Y4, Y1 // q = q*r + c2
	VMULPD       Y4, Y4, Y5      // r2
	VFMADD213PD  Y4, Y5, Y1      // p = q*r2 + r
	VFMADD213PD  Y7, Y7, Y1      // s*p + s
	VMOVUPD      Y1, (DI)(AX*8)
	ADDQ         $4, AX
	CMPQ         AX, CX
	JL           loop

done:
	VZEROUPPER
	MOVQ AX, ret+48(FP)
	RET
