package isoimage

import (
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/kdomanski/iso9660"
)

// Read returns the label and the files of an ISO by their paths as Linux's
// isofs shows them (version suffix ";1" stripped). It reads what Write
// wrote, for tests and for checking an image; maxBytes bounds each file.
func Read(p string, maxBytes int64) (string, map[string][]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	img, err := iso9660.OpenImage(f)
	if err != nil {
		return "", nil, fmt.Errorf("not an ISO 9660 image: %w", err)
	}
	label, err := img.Label()
	if err != nil {
		return "", nil, err
	}
	root, err := img.RootDir()
	if err != nil {
		return "", nil, err
	}
	out := map[string][]byte{}
	var walk func(dir *iso9660.File, prefix string) error
	walk = func(dir *iso9660.File, prefix string) error {
		children, err := dir.GetChildren()
		if err != nil {
			return err
		}
		for _, c := range children {
			name := path.Join(prefix, strings.TrimSuffix(c.Name(), ";1"))
			if c.IsDir() {
				if err := walk(c, name); err != nil {
					return err
				}
				continue
			}
			b, err := io.ReadAll(io.LimitReader(c.Reader(), maxBytes+1))
			if err != nil {
				return err
			}
			if int64(len(b)) > maxBytes {
				return fmt.Errorf("%s: more than %d bytes", name, maxBytes)
			}
			out[name] = b
		}
		return nil
	}
	return label, out, walk(root, "")
}
