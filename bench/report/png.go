package report

import (
	"fmt"
	"os"

	"gonum.org/v1/plot/vg/vgimg"
)

func savePNG(img *vgimg.Canvas, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("encode PNG: %w", err)
	}
	return f.Close()
}
