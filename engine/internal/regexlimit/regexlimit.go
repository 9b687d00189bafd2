// Package regexlimit runs a regular expression search with ICU's limits on
// time and backtracking stack, as MySQL 8 does for its REGEXP functions
// (regexp_time_limit, regexp_stack_limit). go-mysql-server searches with
// ICU too but without either limit: a pattern such as (a+)+b over 32 a's
// backtracks for hours, in C, where no context can stop it.
package regexlimit

// #cgo !windows LDFLAGS: -licui18n -licuuc -licudata
// #include <stdlib.h>
// #include <unicode/uregex.h>
import "C"

import (
	"errors"
	"unicode/utf16"
	"unsafe"
)

// Errors of a search that ran into a limit, in MySQL's words (ICU's
// U_REGEX_TIME_OUT and U_REGEX_STACK_OVERFLOW as MySQL reports them),
// which clients see.
var (
	//lint:ignore ST1005 MySQL's message text
	ErrTimeout = errors.New("Timeout exceeded in regular expression match.")
	//lint:ignore ST1005 MySQL's message text
	ErrStackOverflow = errors.New("Overflow in the regular expression backtrack stack.")
)

// Flags are ICU's regular expression flags.
const (
	CaseInsensitive = C.UREGEX_CASE_INSENSITIVE
	Multiline       = C.UREGEX_MULTILINE
	DotAll          = C.UREGEX_DOTALL
	UnixLines       = C.UREGEX_UNIX_LINES
)

// Check finds every match of pattern in text, each search limited to
// timeLimit steps of ICU's matcher (0: none) and a backtracking stack of
// stackLimit bytes (0: none), and returns ErrTimeout or ErrStackOverflow if
// one ran out. It finds every match because REGEXP_REPLACE does, and a
// later search can be the slow one. An invalid pattern is no error here:
// the caller's own compilation reports it.
func Check(pattern, text string, flags uint32, timeLimit, stackLimit int32) error {
	pat := utf16.Encode([]rune(pattern))
	txt := utf16.Encode([]rune(text))
	cpat := cUChars(pat)
	defer C.free(unsafe.Pointer(cpat))
	ctxt := cUChars(txt)
	defer C.free(unsafe.Pointer(ctxt))

	var status C.UErrorCode
	re := C.uregex_open(cpat, C.int32_t(len(pat)), C.uint32_t(flags), nil, &status)
	if status > C.U_ZERO_ERROR {
		return nil
	}
	defer C.uregex_close(re)
	C.uregex_setTimeLimit(re, C.int32_t(timeLimit), &status)
	C.uregex_setStackLimit(re, C.int32_t(stackLimit), &status)
	C.uregex_setText(re, ctxt, C.int32_t(len(txt)), &status)
	if status > C.U_ZERO_ERROR {
		return nil
	}
	for C.uregex_findNext(re, &status) != 0 {
	}
	switch status {
	case C.U_REGEX_TIME_OUT:
		return ErrTimeout
	case C.U_REGEX_STACK_OVERFLOW:
		return ErrStackOverflow
	}
	return nil
}

// cUChars copies s to C memory (never empty: ICU wants a valid pointer).
func cUChars(s []uint16) *C.UChar {
	p := (*C.UChar)(C.malloc(C.size_t(max(len(s), 1)) * C.size_t(unsafe.Sizeof(C.UChar(0)))))
	copy(unsafe.Slice((*uint16)(unsafe.Pointer(p)), max(len(s), 1)), s)
	return p
}
