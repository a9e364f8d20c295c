#include "textflag.h"

// func forWrite(p unsafe.Pointer)
TEXT ·forWrite(SB), NOSPLIT|NOFRAME, $0-8
	MOVQ p+0(FP), AX
	// PREFETCHW (AX): Go's assembler has no mnemonic for it.
	BYTE $0x0F; BYTE $0x0D; BYTE $0x08
	RET
