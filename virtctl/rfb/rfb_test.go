package rfb_test

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"io"
	"net"
	"strings"
	"testing"

	"kubevirt.dev/virt/virtctl/rfb"
)

// rect is a rectangle of a framebuffer update.
type rect struct {
	x, y, w, h int
	encoding   int32
}

// fakeServer is the server side of RFB 3.8 as QEMU speaks it, scripted by
// its fields; it records what the client sent.
type fakeServer struct {
	version      string   // default rfb.Version
	security     []byte   // offered; default {1}
	refuse       string   // refuse the connection with this reason
	result       uint32   // SecurityResult
	resultReason string   // with result != 0
	width        int      // framebuffer
	height       int      //
	extras       [][]byte // messages before each update
	updates      [][]rect // one FramebufferUpdate per client request, in order
	pixel        func(x, y int) color.RGBA

	// What the client sent.
	clientVersion string
	choice        byte
	shared        byte
	format        rfb.PixelFormat
	encodings     []int32
	requests      [][]byte
}

func (s *fakeServer) serve(t *testing.T, conn net.Conn) {
	defer conn.Close()
	be := binary.BigEndian
	version := s.version
	if version == "" {
		version = rfb.Version
	}
	conn.Write([]byte(version))
	b := make([]byte, 12)
	if _, err := io.ReadFull(conn, b); err != nil {
		return
	}
	s.clientVersion = string(b)
	if s.refuse != "" {
		conn.Write(append([]byte{0}, lengthPrefixed(s.refuse)...))
		return
	}
	security := s.security
	if security == nil {
		security = []byte{1}
	}
	conn.Write(append([]byte{byte(len(security))}, security...))
	if _, err := io.ReadFull(conn, b[:1]); err != nil {
		return
	}
	s.choice = b[0]
	res := be.AppendUint32(nil, s.result)
	if s.result != 0 {
		res = append(res, lengthPrefixed(s.resultReason)...)
	}
	conn.Write(res)
	if s.result != 0 {
		return
	}
	if _, err := io.ReadFull(conn, b[:1]); err != nil {
		return
	}
	s.shared = b[0]
	// ServerInit in QEMU's default format, which the client replaces.
	si := be.AppendUint16(nil, uint16(s.width))
	si = be.AppendUint16(si, uint16(s.height))
	si = append(si, rfb.PixelFormat{BitsPerPixel: 32, Depth: 24, TrueColour: true, RedMax: 255, GreenMax: 255, BlueMax: 255, RedShift: 0, GreenShift: 8, BlueShift: 16}.Marshal()...)
	si = append(si, lengthPrefixed("vmi-tiny")...)
	conn.Write(si)

	// SetPixelFormat, SetEncodings.
	msg := make([]byte, 20)
	if _, err := io.ReadFull(conn, msg); err != nil {
		return
	}
	if msg[0] != 0 {
		t.Errorf("first client message has type %d, want SetPixelFormat (0)", msg[0])
	}
	s.format = rfb.UnmarshalPixelFormat(msg[4:])
	if _, err := io.ReadFull(conn, msg[:4]); err != nil {
		return
	}
	if msg[0] != 2 {
		t.Errorf("second client message has type %d, want SetEncodings (2)", msg[0])
	}
	for range be.Uint16(msg[2:]) {
		if _, err := io.ReadFull(conn, msg[:4]); err != nil {
			return
		}
		s.encodings = append(s.encodings, int32(be.Uint32(msg)))
	}

	for _, update := range s.updates {
		req := make([]byte, 10)
		if _, err := io.ReadFull(conn, req); err != nil {
			return
		}
		s.requests = append(s.requests, req)
		for _, e := range s.extras {
			conn.Write(e)
		}
		out := []byte{0, 0}
		out = be.AppendUint16(out, uint16(len(update)))
		for _, r := range update {
			out = be.AppendUint16(out, uint16(r.x))
			out = be.AppendUint16(out, uint16(r.y))
			out = be.AppendUint16(out, uint16(r.w))
			out = be.AppendUint16(out, uint16(r.h))
			out = be.AppendUint32(out, uint32(r.encoding))
			for y := r.y; y < r.y+r.h; y++ {
				for x := r.x; x < r.x+r.w; x++ {
					out = s.appendPixel(out, s.pixel(x, y))
				}
			}
		}
		conn.Write(out)
	}
	// Take the next request, if any, and hang up: a client still waiting
	// for pixels reads EOF.
	conn.Read(make([]byte, 10))
}

// appendPixel encodes c in the format the client set, as a server must.
func (s *fakeServer) appendPixel(b []byte, c color.RGBA) []byte {
	f := s.format
	v := uint32(c.R)*uint32(f.RedMax)/255<<f.RedShift |
		uint32(c.G)*uint32(f.GreenMax)/255<<f.GreenShift |
		uint32(c.B)*uint32(f.BlueMax)/255<<f.BlueShift
	if f.BigEndian {
		return binary.BigEndian.AppendUint32(b, v)
	}
	return binary.LittleEndian.AppendUint32(b, v)
}

func lengthPrefixed(s string) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(s))), s...)
}

func pattern(x, y int) color.RGBA {
	return color.RGBA{R: uint8(40*x + 1), G: uint8(70*y + 2), B: uint8(x*y + 3), A: 0xff}
}

// run has the client take a screenshot from s.
func run(t *testing.T, s *fakeServer) (*image.RGBA, error) {
	t.Helper()
	if s.pixel == nil {
		s.pixel = pattern
	}
	client, server := net.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.serve(t, server)
	}()
	img, err := rfb.Screenshot(client)
	client.Close()
	<-done
	return img, err
}

func TestScreenshot(t *testing.T) {
	bell := []byte{2}
	cut := append([]byte{3, 0, 0, 0}, lengthPrefixed("clipboard")...)
	colourMap := append([]byte{1, 0, 0, 0, 0, 2}, make([]byte, 12)...)
	for _, tc := range []struct {
		name    string
		updates [][]rect
		extras  [][]byte
	}{
		{name: "one rectangle", updates: [][]rect{{{0, 0, 4, 3, 0}}}},
		{name: "rectangles of one update", updates: [][]rect{{{0, 0, 4, 1, 0}, {0, 1, 1, 2, 0}, {1, 1, 3, 2, 0}}}},
		{name: "other messages first", updates: [][]rect{{{0, 0, 4, 3, 0}}}, extras: [][]byte{bell, cut, colourMap}},
		{name: "updates until every pixel came", updates: [][]rect{{{0, 0, 4, 2, 0}}, {}, {{0, 1, 4, 2, 0}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &fakeServer{width: 4, height: 3, updates: tc.updates, extras: tc.extras}
			img, err := run(t, s)
			if err != nil {
				t.Fatalf("Screenshot: %v", err)
			}
			if s.clientVersion != rfb.Version || s.choice != 1 || s.shared != 1 {
				t.Errorf("handshake: version %q, security %d, shared %d; want %q, None (1), shared (1)", s.clientVersion, s.choice, s.shared, rfb.Version)
			}
			if s.format != rfb.Format {
				t.Errorf("pixel format %+v, want %+v", s.format, rfb.Format)
			}
			if len(s.encodings) != 1 || s.encodings[0] != 0 {
				t.Errorf("encodings %v, want Raw (0) only", s.encodings)
			}
			full := []byte{3, 0, 0, 0, 0, 0, 0, 4, 0, 3} // non-incremental, 0,0 4x3
			for i, req := range s.requests {
				if !bytes.Equal(req, full) {
					t.Errorf("request %d: % x, want % x", i, req, full)
				}
			}
			if len(s.requests) != len(tc.updates) {
				t.Errorf("%d requests, want %d", len(s.requests), len(tc.updates))
			}
			if img.Bounds() != image.Rect(0, 0, 4, 3) {
				t.Fatalf("image bounds %v, want 4x3", img.Bounds())
			}
			for y := range 3 {
				for x := range 4 {
					if got := img.RGBAAt(x, y); got != pattern(x, y) {
						t.Errorf("pixel %d,%d: %v, want %v", x, y, got, pattern(x, y))
					}
				}
			}
		})
	}
}

func TestScreenshotErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    fakeServer
		want string
	}{
		{name: "old version", s: fakeServer{version: "RFB 003.003\n"}, want: "the server speaks RFB 3.3; this client needs 3.8"},
		{name: "not RFB", s: fakeServer{version: "SSH-2.0-xxxx"}, want: "not an RFB server"},
		{name: "refused", s: fakeServer{refuse: "too many clients"}, want: "the server refused the connection: too many clients"},
		{name: "password", s: fakeServer{security: []byte{2}}, want: "the server wants authentication (security types [2])"},
		{name: "security failed", s: fakeServer{result: 1, resultReason: "no"}, want: "the server refused security type None: no"},
		{name: "empty framebuffer", s: fakeServer{width: 0, height: 0}, want: "the framebuffer is empty"},
		{name: "rectangle outside", s: fakeServer{width: 4, height: 3, updates: [][]rect{{{2, 0, 4, 3, 0}}}}, want: "rectangle 0 (4x3 at 2,0) lies outside the 4x3 framebuffer"},
		{name: "other encoding", s: fakeServer{width: 4, height: 3, updates: [][]rect{{{0, 0, 4, 3, 16}}}}, want: "rectangle 0 has encoding 16"},
		{name: "unknown message", s: fakeServer{width: 4, height: 3, extras: [][]byte{{9}}, updates: [][]rect{{}}}, want: "message type 9"},
		{name: "cut off", s: fakeServer{width: 4, height: 3}, want: "EOF"},
		{name: "cut off after a part", s: fakeServer{width: 4, height: 3, updates: [][]rect{{{0, 0, 4, 1, 0}}}}, want: "EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, &tc.s)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Screenshot: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestPixelFormatRoundTrip(t *testing.T) {
	f := rfb.PixelFormat{BitsPerPixel: 16, Depth: 15, BigEndian: true, TrueColour: true, RedMax: 31, GreenMax: 31, BlueMax: 31, RedShift: 10, GreenShift: 5}
	if got := rfb.UnmarshalPixelFormat(f.Marshal()); got != f {
		t.Errorf("round trip: %+v, want %+v", got, f)
	}
}
