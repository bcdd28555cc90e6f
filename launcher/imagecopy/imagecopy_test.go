package imagecopy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCopyFileAndDirectory(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "img", "disk.qcow2"), []byte("QFI\xfbdisk"))
	writeFile(t, filepath.Join(dir, "boot", "vmlinuz"), []byte("kernel"))
	dstDisk := filepath.Join(dir, "out", "vol", "disk.img")
	dstKernel := filepath.Join(dir, "out", "kb", "kernel")
	err := Run([]string{"copy", filepath.Join(dir, "img"), dstDisk, filepath.Join(dir, "boot", "vmlinuz"), dstKernel})
	if err != nil {
		t.Fatalf("copy: %v", err)
	}
	for path, want := range map[string]string{dstDisk: "QFI\xfbdisk", dstKernel: "kernel"} {
		b, err := os.ReadFile(path)
		if err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", path, b, err, want)
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, "out", "*", ".*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
}

func TestCopyIsSparse(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.img")
	// 64 MiB: data at the start, an explicit run of zeros, data at the end.
	f, err := os.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(bytes.Repeat([]byte{1}, 4096))
	f.WriteAt(make([]byte, 8<<20), 1<<20) // written zeros, not a hole
	f.WriteAt(bytes.Repeat([]byte{2}, 4096), 64<<20-4096)
	f.Close()
	dst := filepath.Join(dir, "dst.img")
	if err := Copy(src, dst); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(src)
	b, _ := os.ReadFile(dst)
	if !bytes.Equal(a, b) {
		t.Fatalf("copy differs from source")
	}
	st, _ := os.Stat(dst)
	if alloc := st.Sys().(*syscall.Stat_t).Blocks * 512; alloc > 4<<20 {
		t.Errorf("copy of a 64 MiB image with 8 KiB of data allocates %d bytes; want it sparse", alloc)
	}
	if st.Mode().Perm() != 0o664 {
		t.Errorf("copy mode %v, want 0664", st.Mode().Perm())
	}
}

func TestCopyErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "two", "a"), nil)
	writeFile(t, filepath.Join(dir, "two", "b"), nil)
	os.Mkdir(filepath.Join(dir, "empty"), 0o755)
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no command":      {nil, "no command"},
		"unknown command": {[]string{"move"}, "unknown command"},
		"odd arguments":   {[]string{"copy", "a"}, "pairs"},
		"missing source":  {[]string{"copy", filepath.Join(dir, "nope"), filepath.Join(dir, "x")}, "no such file"},
		"two files":       {[]string{"copy", filepath.Join(dir, "two"), filepath.Join(dir, "x")}, "holds 2 regular files"},
		"empty directory": {[]string{"copy", filepath.Join(dir, "empty"), filepath.Join(dir, "x")}, "holds no regular file"},
		"install args":    {[]string{"install"}, "one directory"},
		"hold args":       {[]string{"hold", "/disk"}, "hold takes pairs of <src> <record> and the launcher"},
		"hold pairs":      {[]string{"hold", "/k", "/r", "/i", "launcher"}, "hold takes pairs of <src> <record> and the launcher, got 4"},
	} {
		t.Run(name, func(t *testing.T) {
			err := Run(tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run(%q) = %v, want an error containing %q", tc.args, err, tc.want)
			}
		})
	}
}

func TestInstall(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "self")
	writeFile(t, self, []byte("#!/bin/true\n"))
	if err := Install(self, filepath.Join(dir, "tools")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, "tools", "virt-imagecopy"))
	if err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("installed tool: %v, mode %v; want mode 0755", err, st.Mode())
	}
}

// TestToolIsStatic guards what the holder containers need: a binary without
// cgo, so it runs in images without libc.
func TestToolIsStatic(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "kubevirt.dev/virt/cmd/virt-imagecopy").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "runtime/cgo" || strings.HasPrefix(dep, "libvirt.org/") {
			t.Errorf("virt-imagecopy depends on %s", dep)
		}
	}
	bin := filepath.Join(t.TempDir(), "virt-imagecopy")
	build := exec.Command("go", "build", "-o", bin, "kubevirt.dev/virt/cmd/virt-imagecopy")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 build: %v\n%s", err, out)
	}
	// The binary reports errors and exits 1.
	run := exec.Command(bin, "copy", "/nonexistent", filepath.Join(t.TempDir(), "x"))
	out, err = run.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "virt-imagecopy: source /nonexistent") {
		t.Errorf("failing copy: %v, output %q; want exit 1 and the reason", err, out)
	}
}
