package proxy

import (
	"testing"
	"unsafe"
)

// TestRequestStateSize: the request state, made for every request, keeps
// to the allocator's 1 024-byte size class (1 016 bytes or less leaves
// room for nothing else the class needs), whatever parts it is made of.
func TestRequestStateSize(t *testing.T) {
	if n := unsafe.Sizeof(requestState{}); n > 1016 {
		t.Errorf("requestState is %d bytes, more than the 1 016 that take the 1 024-byte class", n)
	}
}
