package image

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

type entry struct {
	Type     byte
	Mode     int64
	Linkname string
	Body     string
}

// entries lists a layer's contents by name.
func entries(t *testing.T, l v1.Layer) map[string]entry {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	out := map[string]entry{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if !hdr.ModTime.Equal(epoch) {
			t.Errorf("%s: mtime %v, want the epoch", hdr.Name, hdr.ModTime)
		}
		out[hdr.Name] = entry{Type: hdr.Typeflag, Mode: hdr.Mode, Linkname: hdr.Linkname, Body: string(body)}
	}
}

func writeFile(t *testing.T, p, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	// A directory layer with a symlink and a hard link.
	root := filepath.Join(dir, "root")
	writeFile(t, filepath.Join(root, "usr/lib/libc.so.6"), "libc", 0o755)
	if err := os.Symlink("usr/lib", filepath.Join(root, "lib")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(root, "usr/lib/libc.so.6"), filepath.Join(root, "usr/lib/libc-2.so")); err != nil {
		t.Fatal(err)
	}
	// A gzip'd layer tarball, as the launcher rootfs comes.
	gz := filepath.Join(dir, "base.tar.gz")
	f, err := os.Create(gz)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	if err := writeFilesTar(zw, []file{{dest: "/etc/os-release", src: writeTemp(t, dir, "debian"), mode: 0o644}}); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	f.Close()
	bin := writeTemp(t, dir, "#!/bin/true")

	o := Options{
		Output:     filepath.Join(dir, "img.tar"),
		Tags:       []string{"localhost/test:dev", "localhost/test:abc123"},
		Layers:     []string{gz, root},
		Files:      []string{"/usr/bin/tool=" + bin + ":0750"},
		Entrypoint: []string{"/usr/bin/tool"},
		Env:        []string{"A=b"},
		Labels:     []string{"k=v"},
	}
	id, err := Write(o)
	if err != nil {
		t.Fatalf("Write: %v", err)
	}

	for _, tag := range o.Tags {
		ref, err := name.NewTag(tag)
		if err != nil {
			t.Fatal(err)
		}
		img, err := tarball.ImageFromPath(o.Output, &ref)
		if err != nil {
			t.Fatalf("read back %s: %v", tag, err)
		}
		cn, err := img.ConfigName()
		if err != nil || cn.String() != id {
			t.Fatalf("%s: image id %v (%v), Write said %s", tag, cn, err, id)
		}
	}
	ref, _ := name.NewTag(o.Tags[0])
	img, err := tarball.ImageFromPath(o.Output, &ref)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture == "" {
		t.Errorf("platform %s/%s, want linux/<arch>", cf.OS, cf.Architecture)
	}
	if diff := cmp.Diff([]string{"/usr/bin/tool"}, cf.Config.Entrypoint); diff != "" {
		t.Errorf("entrypoint (-want +got):\n%s", diff)
	}
	if cf.Config.Labels["k"] != "v" || len(cf.Config.Env) != 1 {
		t.Errorf("labels %v env %v", cf.Config.Labels, cf.Config.Env)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 3 {
		t.Fatalf("layers: %d, %v; want 3", len(layers), err)
	}

	want := []map[string]entry{
		{
			"etc/":           {Type: tar.TypeDir, Mode: 0o755},
			"etc/os-release": {Type: tar.TypeReg, Mode: 0o644, Body: "debian"},
		},
		{
			"lib":               {Type: tar.TypeSymlink, Mode: 0o777, Linkname: "usr/lib"},
			"usr/":              {Type: tar.TypeDir, Mode: 0o755},
			"usr/lib/":          {Type: tar.TypeDir, Mode: 0o755},
			"usr/lib/libc-2.so": {Type: tar.TypeReg, Mode: 0o755, Body: "libc"},
			"usr/lib/libc.so.6": {Type: tar.TypeLink, Mode: 0o755, Linkname: "usr/lib/libc-2.so"},
		},
		{
			"usr/":         {Type: tar.TypeDir, Mode: 0o755},
			"usr/bin/":     {Type: tar.TypeDir, Mode: 0o755},
			"usr/bin/tool": {Type: tar.TypeReg, Mode: 0o750, Body: "#!/bin/true"},
		},
	}
	for i, l := range layers {
		if diff := cmp.Diff(want[i], entries(t, l)); diff != "" {
			t.Errorf("layer %d (-want +got):\n%s", i, diff)
		}
	}
	gzDigest, err := layers[0].Digest()
	if err != nil {
		t.Fatal(err)
	}
	if h, _, _ := v1.SHA256(mustOpen(t, gz)); h != gzDigest {
		t.Errorf("a gzip'd layer must be used unchanged: digest %s, file %s", gzDigest, h)
	}

	// The same inputs give the same image, byte for byte.
	o.Output = filepath.Join(dir, "again.tar")
	id2, err := Write(o)
	if err != nil {
		t.Fatal(err)
	}
	if id2 != id {
		t.Errorf("rebuild changed the image id: %s then %s", id, id2)
	}
}

func TestWriteRejects(t *testing.T) {
	dir := t.TempDir()
	bin := writeTemp(t, dir, "x")
	for _, tc := range []struct {
		name string
		o    Options
	}{
		{"no output", Options{Tags: []string{"a:b"}}},
		{"no tag", Options{Output: filepath.Join(dir, "o.tar")}},
		{"relative dest", Options{Output: filepath.Join(dir, "o.tar"), Tags: []string{"a:b"}, Files: []string{"usr/bin/x=" + bin}}},
		{"missing source", Options{Output: filepath.Join(dir, "o.tar"), Tags: []string{"a:b"}, Files: []string{"/x=" + dir + "/nope"}}},
		{"directory source", Options{Output: filepath.Join(dir, "o.tar"), Tags: []string{"a:b"}, Files: []string{"/x=" + dir}}},
		{"bad mode", Options{Output: filepath.Join(dir, "o.tar"), Tags: []string{"a:b"}, Files: []string{"/x=" + bin + ":9z"}}},
		{"bad tag", Options{Output: filepath.Join(dir, "o.tar"), Tags: []string{"UPPER/case:tag"}, Files: []string{"/x=" + bin}}},
		{"bad env", Options{Output: filepath.Join(dir, "o.tar"), Tags: []string{"a:b"}, Env: []string{"novalue"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Write(tc.o); err == nil {
				t.Fatal("Write succeeded, want an error")
			}
			if _, err := os.Stat(filepath.Join(dir, "o.tar")); err == nil {
				t.Fatal("a failed Write left its output behind")
			}
		})
	}
}

func writeTemp(t *testing.T, dir, body string) string {
	t.Helper()
	f, err := os.CreateTemp(dir, "f")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(body); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

func mustOpen(t *testing.T, p string) io.Reader {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
