package projected

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kubeletDir lays files out as the kubelet's atomic writer does: the data
// in a timestamped directory, ..data a symlink to it, each top-level name a
// symlink to ..data/name.
func kubeletDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	ts := filepath.Join(dir, "..2026_11_27_23_00_00.123")
	for name, content := range files {
		p := filepath.Join(ts, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Base(ts), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	top := map[string]bool{}
	for name := range files {
		top[strings.SplitN(name, "/", 2)[0]] = true
	}
	for name := range top {
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReadKubeletLayout(t *testing.T) {
	dir := kubeletDir(t, map[string]string{"ca.crt": "CA", "token": "eyJ", "labels/app": "web"})
	files, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range files {
		got[f.Name] = string(f.Data)
	}
	want := map[string]string{"ca.crt": "CA", "token": "eyJ", "labels/app": "web"}
	if len(got) != len(want) {
		t.Errorf("read %v, want %v (nothing of ..data twice)", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

func TestReadMissingIsEmpty(t *testing.T) {
	files, err := Read(filepath.Join(t.TempDir(), "absent"))
	if err != nil || len(files) != 0 {
		t.Errorf("Read(absent) = %v, %v; want nothing, no error", files, err)
	}
}

func TestReadRefusesEscapes(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "host-secret")
	if err := os.WriteFile(outside, []byte("host"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, link := range map[string]string{"absolute": outside, "relative": "../" + filepath.Base(filepath.Dir(outside)) + "/host-secret"} {
		t.Run(name, func(t *testing.T) {
			dir := kubeletDir(t, map[string]string{"ok": "fine"})
			if err := os.Symlink(link, filepath.Join(dir, "evil")); err != nil {
				t.Fatal(err)
			}
			files, err := Read(dir)
			if err == nil {
				t.Errorf("a symlink out of the directory was followed: %v", files)
			}
		})
	}
}

func TestReadBounds(t *testing.T) {
	t.Run("bytes", func(t *testing.T) {
		dir := kubeletDir(t, map[string]string{"a": strings.Repeat("x", MaxBytes/2+1), "b": strings.Repeat("y", MaxBytes/2+1)})
		if _, err := Read(dir); err == nil {
			t.Error("read more than MaxBytes")
		}
	})
	t.Run("files", func(t *testing.T) {
		files := map[string]string{}
		for i := 0; i <= MaxFiles; i++ {
			files["f"+strings.Repeat("0", 3)+string(rune('a'+i%26))+string(rune('a'+i/26))] = "x"
		}
		if _, err := Read(kubeletDir(t, files)); err == nil {
			t.Error("read more than MaxFiles files")
		}
	})
	t.Run("fifo skipped", func(t *testing.T) {
		dir := kubeletDir(t, map[string]string{"ok": "fine"})
		// A FIFO would block a reader forever: only regular files count.
		if err := mkfifo(filepath.Join(dir, "pipe")); err != nil {
			t.Fatalf("make a FIFO to read past: %v", err)
		}
		files, err := Read(dir)
		if err != nil || len(files) != 1 {
			t.Errorf("Read = %v, %v; want the regular file only", files, err)
		}
	})
}
