package rfbtest

import (
	"encoding/binary"
	"fmt"
	"image"
	"io"

	"kubevirt.dev/virt/virtctl/rfb"
)

// Serve speaks RFB 3.8 on rw and answers every FramebufferUpdateRequest
// with the whole of img as one Raw rectangle, in the pixel format the
// client set (32 bits per pixel). It returns when the client goes (nil) or
// sends something it does not understand.
func Serve(rw io.ReadWriter, img image.Image) error {
	be := binary.BigEndian
	b := img.Bounds()
	// Greeting, security None, ServerInit in QEMU's default format.
	if _, err := rw.Write([]byte(rfb.Version)); err != nil {
		return err
	}
	buf := make([]byte, 64)
	if _, err := io.ReadFull(rw, buf[:12]); err != nil {
		return ignoreEOF(err)
	}
	if string(buf[:12]) != rfb.Version {
		return fmt.Errorf("client version %q", buf[:12])
	}
	if _, err := rw.Write([]byte{1, 1}); err != nil {
		return err
	}
	if _, err := io.ReadFull(rw, buf[:1]); err != nil || buf[0] != 1 {
		return fmt.Errorf("security choice %d: %v", buf[0], err)
	}
	if _, err := rw.Write([]byte{0, 0, 0, 0}); err != nil {
		return err
	}
	if _, err := io.ReadFull(rw, buf[:1]); err != nil {
		return ignoreEOF(err)
	}
	si := be.AppendUint16(nil, uint16(b.Dx()))
	si = be.AppendUint16(si, uint16(b.Dy()))
	si = append(si, rfb.Format.Marshal()...)
	si = be.AppendUint32(si, 4)
	si = append(si, "test"...)
	if _, err := rw.Write(si); err != nil {
		return err
	}

	format := rfb.Format
	for {
		if _, err := io.ReadFull(rw, buf[:1]); err != nil {
			return ignoreEOF(err)
		}
		var err error
		switch buf[0] {
		case 0: // SetPixelFormat
			if _, err = io.ReadFull(rw, buf[:19]); err == nil {
				format = rfb.UnmarshalPixelFormat(buf[3:19])
			}
		case 2: // SetEncodings
			if _, err = io.ReadFull(rw, buf[:3]); err == nil {
				_, err = io.CopyN(io.Discard, rw, 4*int64(be.Uint16(buf[1:3])))
			}
		case 3: // FramebufferUpdateRequest
			if _, err = io.ReadFull(rw, buf[:9]); err == nil {
				_, err = rw.Write(update(img, format))
			}
		case 4: // KeyEvent
			_, err = io.ReadFull(rw, buf[:7])
		case 5: // PointerEvent
			_, err = io.ReadFull(rw, buf[:5])
		case 6: // ClientCutText
			if _, err = io.ReadFull(rw, buf[:7]); err == nil {
				_, err = io.CopyN(io.Discard, rw, int64(be.Uint32(buf[3:7])))
			}
		default:
			return fmt.Errorf("client message type %d", buf[0])
		}
		if err != nil {
			return ignoreEOF(err)
		}
	}
}

// update is a FramebufferUpdate of all of img in format f.
func update(img image.Image, f rfb.PixelFormat) []byte {
	be := binary.BigEndian
	b := img.Bounds()
	out := []byte{0, 0, 0, 1, 0, 0, 0, 0}
	out = be.AppendUint16(out, uint16(b.Dx()))
	out = be.AppendUint16(out, uint16(b.Dy()))
	out = be.AppendUint32(out, 0) // Raw
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			v := (r>>8)*uint32(f.RedMax)/255<<f.RedShift |
				(g>>8)*uint32(f.GreenMax)/255<<f.GreenShift |
				(bl>>8)*uint32(f.BlueMax)/255<<f.BlueShift
			if f.BigEndian {
				out = be.AppendUint32(out, v)
			} else {
				out = binary.LittleEndian.AppendUint32(out, v)
			}
		}
	}
	return out
}

func ignoreEOF(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return nil
	}
	return err
}
