package imagecopy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// TestSourceOfADirectory: a holder offers a directory's only regular file,
// and refuses a directory that holds none or several.
func TestSourceOfADirectory(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "img", "disk.qcow2"), []byte("QFI\xfbdisk"))
	writeFile(t, filepath.Join(dir, "two", "a"), nil)
	writeFile(t, filepath.Join(dir, "two", "b"), nil)
	os.Mkdir(filepath.Join(dir, "empty"), 0o755)
	if got, err := source(filepath.Join(dir, "img")); err != nil || got != filepath.Join(dir, "img", "disk.qcow2") {
		t.Errorf("source of a directory with one file: %q, %v", got, err)
	}
	for src, want := range map[string]string{
		"nope":  "no such file",
		"two":   "holds 2 regular files",
		"empty": "holds no regular file",
	} {
		if _, err := source(filepath.Join(dir, src)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("source %s: %v, want an error containing %q", src, err, want)
		}
	}
}

func TestRunErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no command":      {nil, "no command"},
		"unknown command": {[]string{"move"}, "unknown command"},
		// Pods copied kernels and disks with it once; they are linked
		// or held in place now.
		"copy":         {[]string{"copy", "a", "b"}, `unknown command "copy"`},
		"install args": {[]string{"install"}, "one directory"},
		"hold args":    {[]string{"hold", "/disk"}, "hold takes pairs of <src> <record> and the launcher"},
		"hold pairs":   {[]string{"hold", "/k", "/r", "/i", "launcher"}, "hold takes pairs of <src> <record> and the launcher, got 4"},
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
	run := exec.Command(bin, "install")
	out, err = run.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "virt-imagecopy: install takes one directory") {
		t.Errorf("failing install: %v, output %q; want exit 1 and the reason", err, out)
	}
}
