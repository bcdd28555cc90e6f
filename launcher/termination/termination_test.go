package termination

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	defer func(p string) { Path = p }(Path)
	Path = filepath.Join(t.TempDir(), "termination-log")
	Write("ignored: no file") // the kubelet creates the file; without it nothing happens
	if _, err := os.Stat(Path); !os.IsNotExist(err) {
		t.Fatalf("Write created %s", Path)
	}
	if err := os.WriteFile(Path, []byte("an older, longer message"), 0o644); err != nil {
		t.Fatal(err)
	}
	Write("copy failed")
	b, _ := os.ReadFile(Path)
	if string(b) != "copy failed" {
		t.Errorf("termination message = %q", b)
	}
}
