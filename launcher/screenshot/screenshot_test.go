package screenshot

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"strings"
	"testing"
)

// ppm is a P6 picture of w x h whose pixel (x, y) is (x, y, x+y).
func ppm(header string, w, h int) []byte {
	var b bytes.Buffer
	b.WriteString(header)
	for y := range h {
		for x := range w {
			b.Write([]byte{byte(x), byte(y), byte(x + y)})
		}
	}
	return b.Bytes()
}

func TestPPMToPNG(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header string
	}{
		{"as QEMU writes it", "P6\n7 5\n255\n"},
		{"comments and runs of white space", "P6 # QEMU\n  7\t5 # size\n255 "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img, err := Decode(MIMEPPM, bytes.NewReader(ppm(tc.header, 7, 5)))
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := Encode(&out, img); err != nil {
				t.Fatal(err)
			}
			got, err := png.Decode(&out)
			if err != nil {
				t.Fatalf("the PNG does not decode: %v", err)
			}
			if b := got.Bounds(); b.Dx() != 7 || b.Dy() != 5 {
				t.Fatalf("PNG is %dx%d, want 7x5", b.Dx(), b.Dy())
			}
			for _, p := range []image.Point{{0, 0}, {6, 4}, {3, 2}} {
				want := color.RGBA{byte(p.X), byte(p.Y), byte(p.X + p.Y), 0xff}
				if c := color.RGBAModel.Convert(got.At(p.X, p.Y)); c != want {
					t.Errorf("pixel %v = %v, want %v", p, c, want)
				}
			}
		})
	}
}

// A PPM whose samples go to 15 is scaled to 0..255.
func TestPPMScalesSamples(t *testing.T) {
	img, err := Decode(MIMEPPM, bytes.NewReader([]byte("P6\n1 1\n15\n\x0f\x00\x05")))
	if err != nil {
		t.Fatal(err)
	}
	if c := img.At(0, 0).(color.RGBA); c != (color.RGBA{255, 0, 85, 255}) {
		t.Errorf("pixel = %v", c)
	}
}

// countingReader counts what was read of it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// The guest chooses its resolution: a header beyond the caps is refused
// from the header alone, before pixels are allocated or read.
func TestSizeCap(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header string
		want   error
	}{
		{"more pixels than the cap", "P6\n3841 2160\n255\n", ErrTooLarge},
		{"a side beyond the cap", "P6\n16385 1\n255\n", ErrTooLarge},
		{"a product that would wrap", "P6\n999999999 999999999\n255\n", ErrTooLarge},
		{"endless digits", "P6\n" + strings.Repeat("9", 100) + " 1\n255\n", ErrFormat},
		{"no pixels", "P6\n0 10\n255\n", ErrFormat},
		{"16-bit samples", "P6\n1 1\n65535\n", ErrFormat},
		{"ASCII PPM", "P3\n1 1\n255\n", ErrFormat},
		{"negative", "P6\n-1 1\n255\n", ErrFormat},
		{"endless comment", "P6\n#" + strings.Repeat("x", 5000), ErrFormat},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Pixels that never end: a decoder that went on reading would
			// hang or allocate.
			r := &countingReader{r: io.MultiReader(strings.NewReader(tc.header), zeros{})}
			_, err := Decode(MIMEPPM, r)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Decode = %v, want %v", err, tc.want)
			}
			if r.n > len(tc.header)+4096 {
				t.Errorf("read %d bytes of a %d-byte header", r.n, len(tc.header))
			}
		})
	}
	t.Run("at the cap", func(t *testing.T) {
		img, err := Decode(MIMEPPM, io.MultiReader(strings.NewReader("P6\n3840 2160\n255\n"), zeros{}))
		if err != nil || img.Bounds().Dx() != 3840 || img.Bounds().Dy() != 2160 {
			t.Fatalf("Decode of a 3840x2160 picture = %v, %v", img.Bounds(), err)
		}
	})
}

// zeros reads zero bytes forever.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func TestTruncatedPPM(t *testing.T) {
	data := ppm("P6\n4 4\n255\n", 4, 4)
	_, err := Decode(MIMEPPM, bytes.NewReader(data[:len(data)-1]))
	if !errors.Is(err, ErrFormat) {
		t.Fatalf("Decode of a truncated PPM = %v, want ErrFormat", err)
	}
}

func TestPNG(t *testing.T) {
	encode := func(w, h int) []byte {
		var b bytes.Buffer
		if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	img, err := Decode(MIMEPNG, bytes.NewReader(encode(640, 480)))
	if err != nil || img.Bounds().Dx() != 640 || img.Bounds().Dy() != 480 {
		t.Fatalf("Decode of a 640x480 PNG = %v, %v", img, err)
	}
	if _, err := Decode(MIMEPNG, bytes.NewReader(encode(4000, 2200))); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Decode of a 4000x2200 PNG = %v, want ErrTooLarge", err)
	}
	if _, err := Decode(MIMEPNG, strings.NewReader("not a PNG")); !errors.Is(err, ErrFormat) {
		t.Errorf("Decode of garbage = %v, want ErrFormat", err)
	}
	if _, err := Decode("image/jpeg", strings.NewReader("")); !errors.Is(err, ErrFormat) {
		t.Errorf("Decode of a JPEG = %v, want ErrFormat", err)
	}
}

func FuzzDecodePPM(f *testing.F) {
	f.Add(ppm("P6\n2 2\n255\n", 2, 2))
	f.Add([]byte("P6 #c\n1 1 15 abc"))
	f.Fuzz(func(t *testing.T, data []byte) {
		img, err := Decode(MIMEPPM, bytes.NewReader(data))
		if err != nil {
			return
		}
		b := img.Bounds()
		if b.Dx()*b.Dy() > MaxPixels || 3*b.Dx()*b.Dy() > len(data) {
			t.Fatalf("decoded %v from %d bytes", b, len(data))
		}
		if err := Encode(io.Discard, img); err != nil {
			t.Fatal(fmt.Errorf("encode: %w", err))
		}
	})
}
