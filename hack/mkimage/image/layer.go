package image

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// epoch is every entry's modification time: layers built from the same
// inputs then have the same digest, whenever and wherever they are built.
var epoch = time.Unix(0, 0)

// writeFilesTar writes a layer holding files at their destinations, owned
// by root, with every parent directory as its own entry so the runtime
// creates them with mode 0755 rather than guessing.
func writeFilesTar(w io.Writer, files []file) error {
	tw := tar.NewWriter(w)
	dirs := map[string]bool{}
	for _, f := range files {
		for d := path.Dir(f.dest); d != "/"; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	var names []string
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	for _, d := range names {
		hdr := &tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(d, "/") + "/", Mode: 0o755, ModTime: epoch}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("write %s: %w", d, err)
		}
	}
	sorted := append([]file(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].dest < sorted[j].dest })
	for _, f := range sorted {
		if err := addFile(tw, f); err != nil {
			return err
		}
	}
	return tw.Close()
}

func addFile(tw *tar.Writer, f file) error {
	in, err := os.Open(f.src)
	if err != nil {
		return fmt.Errorf("add %s: %w", f.dest, err)
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return fmt.Errorf("add %s: %w", f.dest, err)
	}
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     strings.TrimPrefix(f.dest, "/"),
		Mode:     int64(f.mode),
		Size:     st.Size(),
		ModTime:  epoch,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("add %s: %w", f.dest, err)
	}
	if _, err := io.Copy(tw, in); err != nil {
		return fmt.Errorf("add %s from %s: %w", f.dest, f.src, err)
	}
	return nil
}

// writeDirTar writes the contents of root as a layer, keeping modes,
// owners, symlinks and hard links; sockets and pipes are left out.
func writeDirTar(w io.Writer, root string) error {
	tw := tar.NewWriter(w)
	links := map[uint64]string{} // inode -> first name, for hard links
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode()&(fs.ModeSocket|fs.ModeNamedPipe) != 0 {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		target := ""
		if info.Mode()&fs.ModeSymlink != 0 {
			if target, err = os.Readlink(p); err != nil {
				return err
			}
		}
		hdr, err := tar.FileInfoHeader(info, target)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		hdr.Name = filepath.ToSlash(rel)
		if info.IsDir() {
			hdr.Name += "/"
		}
		hdr.Uname, hdr.Gname = "", ""
		hdr.ModTime, hdr.AccessTime, hdr.ChangeTime = epoch, time.Time{}, time.Time{}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && info.Mode().IsRegular() && st.Nlink > 1 {
			if first, seen := links[st.Ino]; seen {
				hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeLink, first, 0
			} else {
				links[st.Ino] = hdr.Name
			}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := io.Copy(tw, f); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("layer from %s: %w", root, err)
	}
	return tw.Close()
}
