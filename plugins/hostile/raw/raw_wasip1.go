//go:build wasip1

package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"unsafe"
)

var (
	pinned  = map[uintptr][]byte{}
	lastOut []byte
	mode    string
)

//go:wasmexport rpengine_alloc
func alloc(n uint32) uintptr {
	b := make([]byte, max(n, 1))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	pinned[p] = b
	return p
}

//go:wasmexport rpengine_free
func free(p uintptr) { delete(pinned, p) }

//go:wasmexport rpengine_describe
func describe(p uintptr, n uint32) uint64 {
	return answer(`{"name":"raw","version":"0","operations":["rpengine_confirm_deleted"]}`)
}

//go:wasmexport rpengine_configure
func configure(p uintptr, n uint32) uint64 {
	cfg := string(pinned[p][:n])
	var r struct{ Repeat *repeat }
	if json.Unmarshal(pinned[p][:n], &r) == nil && r.Repeat != nil {
		mode, built = "repeat", r.Repeat.build()
		return answer(`{"name":"raw"}`)
	}
	for _, m := range []string{"malformed", "outside", "incomplete", "lies"} {
		if strings.Contains(cfg, `"`+m+`"`) {
			mode = m
		}
	}
	return answer(`{"name":"raw"}`)
}

//go:wasmexport rpengine_confirm_deleted
func confirmDeleted(p uintptr, n uint32) uint64 {
	if mode == "lies" {
		return answer(`{"deleted":["00000000-0000-4000-8000-00000000dead"],"present":[]}`)
	}
	return answer(`{"deleted":[],"present":[]}`)
}

// nodes answers list_nodes as the mode says.
func nodes() uint64 {
	switch mode {
	case "malformed":
		return answer(`{"nodes":[{"uuid":"5d7e0f5c-0000-4000-8000-000000000001",`)
	case "outside":
		return 0xfff00000<<32 | 4096
	case "repeat":
		return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(built))))<<32 | uint64(len(built))
	case "incomplete":
		return answer(`{"nodes":[{"uuid":"5d7e0f5c-0000-4000-8000-000000000001"}],"complete":false}`)
	}
	return answer(`{"nodes":[{"uuid":"5d7e0f5c-0000-4000-8000-000000000001"}],"complete":true}`)
}

func answer(s string) uint64 {
	lastOut = []byte(s)
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(lastOut))))<<32 | uint64(len(lastOut))
}

// repeat is a generated answer: Head, then Count copies of Item joined
// by Sep, then Tail; "{i}" in Item becomes the copy's index, for distinct
// names. It is built once, at its exact size, so the guest
// holds one copy: `{"nodes":[` + 10,000,000 × `{}` + `],"complete":true}`
// fits a 64 MiB plugin.
type repeat struct {
	Head, Item, Sep, Tail string
	Count                 int
}

var built []byte

func (r *repeat) build() []byte {
	pre, post, numbered := strings.Cut(r.Item, "{i}")
	n := len(r.Head) + r.Count*len(r.Item) + max(r.Count-1, 0)*len(r.Sep) + len(r.Tail)
	if numbered {
		n += r.Count * 8
	}
	b := make([]byte, 0, n)
	b = append(b, r.Head...)
	for i := range r.Count {
		if i > 0 {
			b = append(b, r.Sep...)
		}
		b = append(b, pre...)
		if numbered {
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, post...)
		}
	}
	return append(b, r.Tail...)
}

func main() {}
