package screenshot

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
)

// MaxPixels is the largest picture taken: 4K UHD (3840x2160). Decoding
// holds 4 bytes per pixel (33 MB at the cap) in the launcher, whose memory
// the pod's overhead must cover; a guest may ask its graphics card for
// more, it then gets no screenshot.
const MaxPixels = 3840 * 2160

// MaxSide bounds either side, so that width*height cannot wrap.
const MaxSide = 16384

// The MIME types libvirt names its pictures with.
const (
	MIMEPPM = "image/x-portable-pixmap"
	MIMEPNG = "image/png"
)

// ErrTooLarge marks a picture larger than MaxPixels.
var ErrTooLarge = errors.New("picture too large")

// ErrFormat marks a picture that is not what its MIME type says, or in a
// format this package does not read.
var ErrFormat = errors.New("unreadable picture")

// Decode reads a picture of MIME type mime from r. The size comes from the
// header and is checked before the pixels are read; r is read no further
// than a picture of that size needs (PNG: its compressed bytes are bounded
// by twice the raw size).
func Decode(mime string, r io.Reader) (image.Image, error) {
	switch mime {
	case MIMEPPM:
		return decodePPM(bufio.NewReader(r))
	case MIMEPNG:
		return decodePNG(r)
	}
	return nil, fmt.Errorf("%w: MIME type %q is neither PPM nor PNG", ErrFormat, mime)
}

// Encode writes img as PNG. Speed over size: the picture is taken on the
// guest's node, whose CPU is the guests'.
func Encode(w io.Writer, img image.Image) error {
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	return enc.Encode(w, img)
}

// checkSize refuses a picture without pixels or larger than the caps.
func checkSize(width, height int) error {
	if width <= 0 || height <= 0 {
		return fmt.Errorf("%w: %dx%d has no pixels", ErrFormat, width, height)
	}
	if width > MaxSide || height > MaxSide || width*height > MaxPixels {
		return fmt.Errorf("%w: %dx%d is more than %d pixels (%d per side)", ErrTooLarge, width, height, MaxPixels, MaxSide)
	}
	return nil
}

// decodePNG checks the header's size, then decodes at most what a PNG of
// that size may take.
func decodePNG(r io.Reader) (image.Image, error) {
	var header bytes.Buffer
	cfg, err := png.DecodeConfig(io.TeeReader(io.LimitReader(r, 1<<16), &header))
	if err != nil {
		return nil, fmt.Errorf("%w: PNG header: %v", ErrFormat, err)
	}
	if err := checkSize(cfg.Width, cfg.Height); err != nil {
		return nil, err
	}
	limit := int64(2*4*cfg.Width*cfg.Height) + 1<<16
	img, err := png.Decode(io.MultiReader(&header, io.LimitReader(r, limit)))
	if err != nil {
		return nil, fmt.Errorf("%w: PNG: %v", ErrFormat, err)
	}
	return img, nil
}

// decodePPM reads a binary PPM (P6, netpbm's format, as QEMU's screendump
// writes it): "P6", width, height and the largest sample value as decimal
// numbers separated by white space (and # comments), one white space
// character, then width*height RGB triples of one byte each.
func decodePPM(r *bufio.Reader) (image.Image, error) {
	magic := make([]byte, 2)
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != "P6" {
		return nil, fmt.Errorf("%w: not a binary PPM (P6)", ErrFormat)
	}
	var fields [3]int
	for i := range fields {
		n, err := ppmNumber(r)
		if err != nil {
			return nil, err
		}
		fields[i] = n
	}
	width, height, maxval := fields[0], fields[1], fields[2]
	if err := checkSize(width, height); err != nil {
		return nil, err
	}
	if maxval < 1 || maxval > 255 {
		return nil, fmt.Errorf("%w: PPM largest sample %d is not 1 to 255", ErrFormat, maxval)
	}
	// ppmNumber consumed the one white space after the largest sample.
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	row := make([]byte, 3*width)
	for y := range height {
		if _, err := io.ReadFull(r, row); err != nil {
			return nil, fmt.Errorf("%w: PPM pixels end at row %d of %d: %v", ErrFormat, y, height, err)
		}
		pix := img.Pix[y*img.Stride:]
		for x := range width {
			pix[4*x] = scale(row[3*x], maxval)
			pix[4*x+1] = scale(row[3*x+1], maxval)
			pix[4*x+2] = scale(row[3*x+2], maxval)
			pix[4*x+3] = 0xff
		}
	}
	return img, nil
}

// scale maps a sample of 0..maxval to 0..255.
func scale(v byte, maxval int) byte {
	if maxval == 255 {
		return v
	}
	if int(v) > maxval {
		return 0xff
	}
	return byte(int(v) * 255 / maxval)
}

// maxDigits bounds a header number: larger ones are refused by the caps
// anyway, so a header of endless digits is not read.
const maxDigits = 9

// ppmNumber skips white space and comments, reads a decimal number and
// the one white space character after it.
func ppmNumber(r *bufio.Reader) (int, error) {
	c, err := r.ReadByte()
	for err == nil && (isSpace(c) || c == '#') {
		if c == '#' {
			// A comment runs to the end of its line; bounded like the rest.
			for n := 0; err == nil && c != '\n' && c != '\r'; n++ {
				if n > 1024 {
					return 0, fmt.Errorf("%w: PPM header comment too long", ErrFormat)
				}
				c, err = r.ReadByte()
			}
		}
		c, err = r.ReadByte()
	}
	n, digits := 0, 0
	for ; err == nil && c >= '0' && c <= '9'; c, err = r.ReadByte() {
		if digits++; digits > maxDigits {
			return 0, fmt.Errorf("%w: PPM header number too long", ErrFormat)
		}
		n = 10*n + int(c-'0')
	}
	switch {
	case err != nil:
		return 0, fmt.Errorf("%w: PPM header: %v", ErrFormat, err)
	case digits == 0 || !isSpace(c):
		return 0, fmt.Errorf("%w: PPM header: %q where a number ends", ErrFormat, c)
	}
	return n, nil
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}
