package rfb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"io"
)

// Screenshot connects on rw (see Connect) and captures the framebuffer.
func Screenshot(rw io.ReadWriter) (*image.RGBA, error) {
	c, err := Connect(rw)
	if err != nil {
		return nil, err
	}
	return c.Capture()
}

// Capture asks for the whole framebuffer (a non-incremental
// FramebufferUpdateRequest) and returns it once every pixel has arrived,
// skipping the bells, clipboard and colour-map messages a server may send
// in between.
func (c *Client) Capture() (*image.RGBA, error) {
	if c.Width == 0 || c.Height == 0 {
		return nil, errors.New("rfb: the framebuffer is empty (0 pixels): the guest has no display yet")
	}
	img := image.NewRGBA(image.Rect(0, 0, c.Width, c.Height))
	covered := make([]bool, c.Width*c.Height)
	missing := len(covered)
	for missing > 0 {
		if err := c.write(framebufferUpdateRequest(false, 0, 0, c.Width, c.Height)); err != nil {
			return nil, fmt.Errorf("rfb: FramebufferUpdateRequest: %w", err)
		}
		if err := c.skipToUpdate(); err != nil {
			return nil, err
		}
		n, err := c.update(img, covered)
		if err != nil {
			return nil, err
		}
		missing -= n
	}
	return img, nil
}

// skipToUpdate reads server messages up to the next FramebufferUpdate's
// type byte, discarding the others.
func (c *Client) skipToUpdate() error {
	for {
		t, err := c.r.ReadByte()
		if err != nil {
			return fmt.Errorf("rfb: read a server message: %w", err)
		}
		switch t {
		case msgFramebufferUpdate:
			return nil
		case msgBell:
		case msgSetColourMapEntries:
			var h struct {
				Pad          uint8
				First, Count uint16
			}
			if err := binary.Read(c.r, binary.BigEndian, &h); err != nil {
				return fmt.Errorf("rfb: read SetColourMapEntries: %w", err)
			}
			if _, err := c.r.Discard(6 * int(h.Count)); err != nil {
				return fmt.Errorf("rfb: read SetColourMapEntries: %w", err)
			}
		case msgServerCutText:
			var h struct {
				Pad    [3]uint8
				Length uint32
			}
			if err := binary.Read(c.r, binary.BigEndian, &h); err != nil {
				return fmt.Errorf("rfb: read ServerCutText: %w", err)
			}
			if _, err := io.CopyN(io.Discard, c.r, int64(h.Length)); err != nil {
				return fmt.Errorf("rfb: read ServerCutText: %w", err)
			}
		default:
			return fmt.Errorf("rfb: the server sent message type %d, which RFB 3.8 does not have", t)
		}
	}
}

// update reads the rest of a FramebufferUpdate into img, marks the pixels
// it covered and returns how many it covered for the first time.
func (c *Client) update(img *image.RGBA, covered []bool) (int, error) {
	var h struct {
		Pad   uint8
		Rects uint16
	}
	if err := binary.Read(c.r, binary.BigEndian, &h); err != nil {
		return 0, fmt.Errorf("rfb: read FramebufferUpdate: %w", err)
	}
	fresh := 0
	row := make([]byte, 4*c.Width)
	for i := range int(h.Rects) {
		var r struct {
			X, Y, W, H uint16
			Encoding   int32
		}
		if err := binary.Read(c.r, binary.BigEndian, &r); err != nil {
			return 0, fmt.Errorf("rfb: read rectangle %d: %w", i, err)
		}
		if r.Encoding != encodingRaw {
			return 0, fmt.Errorf("rfb: rectangle %d has encoding %d; this client asked for Raw (0) only", i, r.Encoding)
		}
		x, y, w, ht := int(r.X), int(r.Y), int(r.W), int(r.H)
		if x+w > c.Width || y+ht > c.Height {
			return 0, fmt.Errorf("rfb: rectangle %d (%dx%d at %d,%d) lies outside the %dx%d framebuffer", i, w, ht, x, y, c.Width, c.Height)
		}
		for yy := y; yy < y+ht; yy++ {
			src := row[:4*w]
			if _, err := io.ReadFull(c.r, src); err != nil {
				return 0, fmt.Errorf("rfb: read the pixels of rectangle %d: %w", i, err)
			}
			dst := img.Pix[img.PixOffset(x, yy):]
			for xx := range w {
				// Format: little-endian 0x00RRGGBB, so B, G, R, unused.
				p := src[4*xx : 4*xx+4]
				dst[4*xx], dst[4*xx+1], dst[4*xx+2], dst[4*xx+3] = p[2], p[1], p[0], 0xff
				if k := yy*c.Width + x + xx; !covered[k] {
					covered[k] = true
					fresh++
				}
			}
		}
	}
	return fresh, nil
}
