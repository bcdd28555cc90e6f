package console_test

import (
	"io"
	"testing"
	"testing/iotest"

	"kubevirt.dev/virt/virtctl/console"
)

func TestEscapeReader(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		one  bool // read one byte at a time, as a raw terminal delivers keys
		want string
	}{
		{name: "no escape reads all", in: "ls -l\r", want: "ls -l\r"},
		{name: "escape alone", in: "\x1d", want: ""},
		{name: "bytes before the escape go through", in: "abc\x1d", want: "abc"},
		{name: "bytes after the escape do not", in: "ab\x1dcd", want: "ab"},
		{name: "key by key", in: "ab\x1dcd", one: true, want: "ab"},
		{name: "Ctrl+C is the guest's", in: "\x03\x04\x1b[A", want: "\x03\x04\x1b[A"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r io.Reader = &stringsReader{s: tc.in}
			if tc.one {
				r = iotest.OneByteReader(r)
			}
			got, err := io.ReadAll(console.NewEscapeReader(r))
			if err != nil {
				t.Fatalf("ReadAll: %v", err)
			}
			if string(got) != tc.want {
				t.Errorf("read %q, want %q", got, tc.want)
			}
		})
	}
}

// TestEscapeReaderStopsReading: after the escape, nothing more is taken
// from the terminal.
func TestEscapeReaderStopsReading(t *testing.T) {
	src := &stringsReader{s: "a\x1d"}
	r := console.NewEscapeReader(src)
	if _, err := io.ReadAll(r); err != nil {
		t.Fatal(err)
	}
	src.s = "more"
	if n, err := r.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Errorf("Read after the escape: %d, %v; want 0, EOF", n, err)
	}
	if src.s != "more" {
		t.Errorf("the terminal was read after the escape")
	}
}

// stringsReader is strings.Reader whose rest can be changed.
type stringsReader struct{ s string }

func (r *stringsReader) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	n := copy(p, r.s)
	r.s = r.s[n:]
	return n, nil
}
