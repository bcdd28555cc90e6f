package rfb

import "encoding/binary"

// Client-to-server message types, RFC 6143 section 7.5.
const (
	msgSetPixelFormat           = 0
	msgSetEncodings             = 2
	msgFramebufferUpdateRequest = 3
)

// Server-to-client message types, RFC 6143 section 7.6.
const (
	msgFramebufferUpdate   = 0
	msgSetColourMapEntries = 1
	msgBell                = 2
	msgServerCutText       = 3
)

// encodingRaw is the only encoding this client asks for.
const encodingRaw int32 = 0

// PixelFormat is RFC 6143's PIXEL_FORMAT.
type PixelFormat struct {
	BitsPerPixel, Depth             uint8
	BigEndian, TrueColour           bool
	RedMax, GreenMax, BlueMax       uint16
	RedShift, GreenShift, BlueShift uint8
}

// Format is the pixel format this client sets: 32 bits per pixel,
// little-endian, 8 bits a channel at shifts 16 (red), 8 (green), 0 (blue),
// so that each pixel arrives as the bytes B, G, R, unused.
var Format = PixelFormat{
	BitsPerPixel: 32, Depth: 24, TrueColour: true,
	RedMax: 255, GreenMax: 255, BlueMax: 255,
	RedShift: 16, GreenShift: 8, BlueShift: 0,
}

// Marshal is the 16 bytes of the format on the wire.
func (f PixelFormat) Marshal() []byte {
	b := make([]byte, 16)
	b[0], b[1] = f.BitsPerPixel, f.Depth
	b[2], b[3] = flag(f.BigEndian), flag(f.TrueColour)
	binary.BigEndian.PutUint16(b[4:], f.RedMax)
	binary.BigEndian.PutUint16(b[6:], f.GreenMax)
	binary.BigEndian.PutUint16(b[8:], f.BlueMax)
	b[10], b[11], b[12] = f.RedShift, f.GreenShift, f.BlueShift
	return b // 13..15: padding
}

// UnmarshalPixelFormat reads the 16 bytes of a PIXEL_FORMAT.
func UnmarshalPixelFormat(b []byte) PixelFormat {
	return PixelFormat{
		BitsPerPixel: b[0], Depth: b[1], BigEndian: b[2] != 0, TrueColour: b[3] != 0,
		RedMax:   binary.BigEndian.Uint16(b[4:]),
		GreenMax: binary.BigEndian.Uint16(b[6:]),
		BlueMax:  binary.BigEndian.Uint16(b[8:]),
		RedShift: b[10], GreenShift: b[11], BlueShift: b[12],
	}
}

func flag(b bool) byte {
	if b {
		return 1
	}
	return 0
}

func setPixelFormat(f PixelFormat) []byte {
	return append([]byte{msgSetPixelFormat, 0, 0, 0}, f.Marshal()...)
}

func setEncodings(encodings ...int32) []byte {
	b := make([]byte, 4, 4+4*len(encodings))
	b[0] = msgSetEncodings
	binary.BigEndian.PutUint16(b[2:], uint16(len(encodings)))
	for _, e := range encodings {
		b = binary.BigEndian.AppendUint32(b, uint32(e))
	}
	return b
}

func framebufferUpdateRequest(incremental bool, x, y, w, h int) []byte {
	b := make([]byte, 10)
	b[0], b[1] = msgFramebufferUpdateRequest, flag(incremental)
	binary.BigEndian.PutUint16(b[2:], uint16(x))
	binary.BigEndian.PutUint16(b[4:], uint16(y))
	binary.BigEndian.PutUint16(b[6:], uint16(w))
	binary.BigEndian.PutUint16(b[8:], uint16(h))
	return b
}
