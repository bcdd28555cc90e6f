package projected

import (
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"syscall"
)

// File is one file of a projected directory: Name is its slash-separated
// path below the directory.
type File struct {
	Name string
	Data []byte
}

// Bounds of what Read takes. The directory is tenant data (a ConfigMap or Secret is at most 1 MiB in etcd, but a downward API
// or projected volume is not bounded by the API), so the launcher reads no more than
// this into memory.
const (
	MaxFiles = 256
	MaxBytes = 4 << 20
	MaxDepth = 8
)

// Read reads the files of a directory the kubelet projected
// (configMap, secret, downwardAPI, projected volumes): each key is a
// symlink to ..data/key, ..data a symlink to a timestamped directory. Every
// open goes through an os.Root at dir, so no symlink leads outside it;
// names starting with ".." (the kubelet's own) are skipped; only regular
// files and directories are taken, bounded in number, depth and bytes. A
// missing directory (an optional ConfigMap that does not exist) has no
// files.
func Read(dir string) ([]File, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("projected volume: %w", err)
	}
	defer root.Close()
	var (
		files []File
		total int64
	)
	var walk func(rel string, depth int) error
	walk = func(rel string, depth int) error {
		if depth > MaxDepth {
			return fmt.Errorf("projected volume: %s: deeper than %d directories", rel, MaxDepth)
		}
		d, err := root.Open(rel)
		if err != nil {
			return fmt.Errorf("projected volume: %w", err)
		}
		// Read to the end, in chunks: a listing cut short would drop
		// files silently. The kubelet's own entries (..data and the
		// timestamped directory) come on top of the files.
		var entries []os.DirEntry
		for {
			chunk, err := d.ReadDir(64)
			entries = append(entries, chunk...)
			if err == io.EOF || (err == nil && len(chunk) == 0) {
				break
			}
			if err != nil {
				d.Close()
				return fmt.Errorf("projected volume: %w", err)
			}
			if len(entries) > MaxFiles+2 {
				d.Close()
				return fmt.Errorf("projected volume: more than %d files", MaxFiles)
			}
		}
		d.Close()
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "..") {
				continue
			}
			name := path.Join(rel, e.Name())
			// O_NONBLOCK: opening a FIFO for reading would wait for a
			// writer; it is skipped below as not regular.
			f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				return fmt.Errorf("projected volume: %w", err)
			}
			st, err := f.Stat()
			if err != nil {
				f.Close()
				return fmt.Errorf("projected volume: %w", err)
			}
			switch {
			case st.IsDir():
				f.Close()
				if err := walk(name, depth+1); err != nil {
					return err
				}
				continue
			case !st.Mode().IsRegular():
				f.Close()
				continue
			}
			if len(files) >= MaxFiles {
				f.Close()
				return fmt.Errorf("projected volume: more than %d files", MaxFiles)
			}
			b, err := io.ReadAll(io.LimitReader(f, MaxBytes-total+1))
			f.Close()
			if err != nil {
				return fmt.Errorf("projected volume: %s: %w", name, err)
			}
			total += int64(len(b))
			if total > MaxBytes {
				return fmt.Errorf("projected volume: more than %d bytes", MaxBytes)
			}
			files = append(files, File{Name: name, Data: b})
		}
		return nil
	}
	if err := walk(".", 0); err != nil {
		return nil, err
	}
	return files, nil
}
