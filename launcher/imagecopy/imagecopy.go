package imagecopy

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"

	"golang.org/x/sys/unix"

	"kubevirt.dev/virt/launcher/layout"
)

// Usage is the tool's synopsis.
const Usage = `usage:
  virt-imagecopy install <dir>
      copy this tool into <dir> (the pod's tools volume)
  virt-imagecopy hold <src> <record> [<src> <record>...] <launcher>
      offer each file <src> (a file, or a directory holding exactly one
      regular file) to the launcher: write its <record> (this process's PID
      and the file's path) and wait until SIGTERM, or until no process runs
      the binary <launcher> any more once one did`

// Run executes the tool's command line (without the program name).
func Run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("no command\n%s", Usage)
	}
	switch args[0] {
	case "install":
		if len(args) != 2 {
			return fmt.Errorf("install takes one directory\n%s", Usage)
		}
		self, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find own executable: %w", err)
		}
		return Install(self, args[1])
	case "hold":
		rest := args[1:]
		if len(rest) < 3 || len(rest)%2 != 1 {
			return fmt.Errorf("hold takes pairs of <src> <record> and the launcher, got %d arguments\n%s", len(rest), Usage)
		}
		var offers []Offer
		for i := 0; i+1 < len(rest); i += 2 {
			offers = append(offers, Offer{Src: rest[i], Record: rest[i+1]})
		}
		ctx, stop := signal.NotifyContext(context.Background(), unix.SIGTERM, unix.SIGINT)
		defer stop()
		return Hold(ctx, offers, rest[len(rest)-1], HoldInterval)
	}
	return fmt.Errorf("unknown command %q\n%s", args[0], Usage)
}

// Install copies the executable self into dir as layout.CopyToolName.
func Install(self, dir string) error {
	dst := filepath.Join(dir, layout.CopyToolName)
	if err := copyFile(self, dst, 0o755); err != nil {
		return fmt.Errorf("install %s: %w", dst, err)
	}
	return nil
}

// source resolves src, a file or a directory holding exactly one regular
// file, to that file.
func source(src string) (string, error) {
	st, err := os.Stat(src)
	if err != nil {
		return "", fmt.Errorf("source %s: %w", src, err)
	}
	if st.Mode().IsRegular() {
		return src, nil
	}
	if !st.IsDir() {
		return "", fmt.Errorf("source %s is neither a regular file nor a directory", src)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return "", fmt.Errorf("source %s: %w", src, err)
	}
	var files []string
	for _, e := range entries {
		p := filepath.Join(src, e.Name())
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			files = append(files, p)
		}
	}
	switch len(files) {
	case 1:
		return files[0], nil
	case 0:
		return "", fmt.Errorf("source directory %s holds no regular file; it must hold exactly one", src)
	}
	return "", fmt.Errorf("source directory %s holds %d regular files %v; it must hold exactly one", src, len(files), files)
}

// copyFile copies from to a temporary file beside to and renames it into
// place, so a half-copied file never carries the final name.
func copyFile(from, to string, mode os.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	out, err := os.CreateTemp(filepath.Dir(to), "."+filepath.Base(to)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(out.Name())
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Chmod(mode); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(out.Name(), to)
}
