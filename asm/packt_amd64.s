//go:build !purego

#include "textflag.h"

// func packTransposedAVX2(dst, src []float64, off, ld, w, kb4 int)
//
// dst[l·w + x] = src[off + x·ld + l] for x < w (even) and l < kb4 (a
// multiple of 4). Rows are taken four at a time: four 256-bit loads (four
// columns of each row), a 4×4 transpose (unpack, then swap 128-bit
// halves), four 256-bit stores into consecutive panel rows. A last pair of
// rows (w mod 4 = 2) is unpacked into 128-bit stores. The caller checked
// every bound and that w, kb4 > 0.
TEXT ·packTransposedAVX2(SB), NOSPLIT, $0-80
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ off+48(FP), AX
	LEAQ (SI)(AX*8), SI
	MOVQ ld+56(FP), R8
	SHLQ $3, R8                  // source row stride in bytes
	MOVQ w+64(FP), R9
	MOVQ R9, R11
	SHRQ $2, R11                 // groups of four rows
	SHLQ $3, R9                  // panel row in bytes
	MOVQ R9, R13
	SHLQ $2, R13                 // four panel rows in bytes
	MOVQ kb4+72(FP), R12
	SHRQ $2, R12                 // steps of four columns
	TESTQ R11, R11
	JZ    pair

group:
	MOVQ SI, BX                  // rows 0, 1 of the group: (BX), (BX)(R8)
	LEAQ (SI)(R8*2), R10         // rows 2, 3: (R10), (R10)(R8)
	MOVQ DI, DX
	MOVQ R12, AX

quad:
	VMOVUPD    (BX), Y0
	VMOVUPD    (BX)(R8*1), Y1
	VMOVUPD    (R10), Y2
	VMOVUPD    (R10)(R8*1), Y3
	VUNPCKLPD  Y1, Y0, Y4        // a0 b0 a2 b2
	VUNPCKHPD  Y1, Y0, Y5        // a1 b1 a3 b3
	VUNPCKLPD  Y3, Y2, Y6        // c0 d0 c2 d2
	VUNPCKHPD  Y3, Y2, Y7        // c1 d1 c3 d3
	VPERM2F128 $0x20, Y6, Y4, Y0 // a0 b0 c0 d0
	VPERM2F128 $0x20, Y7, Y5, Y1 // a1 b1 c1 d1
	VPERM2F128 $0x31, Y6, Y4, Y2 // a2 b2 c2 d2
	VPERM2F128 $0x31, Y7, Y5, Y3 // a3 b3 c3 d3
	VMOVUPD    Y0, (DX)
	VMOVUPD    Y1, (DX)(R9*1)
	VMOVUPD    Y2, (DX)(R9*2)
	LEAQ       (DX)(R9*2), CX
	VMOVUPD    Y3, (CX)(R9*1)
	ADDQ       $32, BX
	ADDQ       $32, R10
	ADDQ       R13, DX
	DECQ       AX
	JNZ        quad

	LEAQ (SI)(R8*4), SI          // the next four rows
	ADDQ $32, DI                 // fill the next four columns of the panel
	DECQ R11
	JNZ  group

pair:
	MOVQ  w+64(FP), AX
	TESTQ $2, AX
	JZ    done
	MOVQ  SI, BX
	MOVQ  DI, DX
	MOVQ  R12, AX

duo:
	VMOVUPD      (BX), Y0
	VMOVUPD      (BX)(R8*1), Y1
	VUNPCKLPD    Y1, Y0, Y4      // a0 b0 a2 b2
	VUNPCKHPD    Y1, Y0, Y5      // a1 b1 a3 b3
	VMOVUPD      X4, (DX)
	VMOVUPD      X5, (DX)(R9*1)
	VEXTRACTF128 $1, Y4, (DX)(R9*2)
	LEAQ         (DX)(R9*2), CX
	VEXTRACTF128 $1, Y5, (CX)(R9*1)
	ADDQ         $32, BX
	ADDQ         R13, DX
	DECQ         AX
	JNZ          duo

done:
	VZEROUPPER
	RET
