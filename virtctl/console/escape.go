package console

import (
	"bytes"
	"io"
)

// Escape is the byte that ends an interactive console: Ctrl+], as in telnet
// and KubeVirt's virtctl. The guest never sees it.
const Escape = 0x1d

// EscapeName is how the escape byte is shown to a person.
const EscapeName = "^]"

// escapeReader reads from r until the escape byte, then reports io.EOF.
type escapeReader struct {
	r       io.Reader
	escaped bool
}

// NewEscapeReader returns a reader of r's bytes up to, not including, the
// first Escape, after which it reports io.EOF without reading r again.
func NewEscapeReader(r io.Reader) io.Reader { return &escapeReader{r: r} }

func (e *escapeReader) Read(p []byte) (int, error) {
	if e.escaped {
		return 0, io.EOF
	}
	n, err := e.r.Read(p)
	if i := bytes.IndexByte(p[:n], Escape); i >= 0 {
		e.escaped = true
		if i == 0 {
			return 0, io.EOF
		}
		// The bytes typed before the escape still go to the guest.
		return i, nil
	}
	return n, err
}
