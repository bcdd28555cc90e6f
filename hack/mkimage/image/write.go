package image

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Write builds the image o describes and writes it to o.Output, atomically.
// It returns the image ID, the digest of its config.
func Write(o Options) (string, error) {
	if err := o.validate(); err != nil {
		return "", err
	}
	files, err := o.files()
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(o.Output), ".mkimage-")
	if err != nil {
		return "", fmt.Errorf("scratch dir: %w", err)
	}
	defer os.RemoveAll(tmp)

	var layers []v1.Layer
	for i, src := range o.Layers {
		l, err := layerFrom(src, filepath.Join(tmp, fmt.Sprintf("dir%d.tar", i)))
		if err != nil {
			return "", err
		}
		layers = append(layers, l)
	}
	if len(files) > 0 {
		p := filepath.Join(tmp, "files.tar")
		if err := writeTarFile(p, func(w io.Writer) error { return writeFilesTar(w, files) }); err != nil {
			return "", err
		}
		l, err := tarball.LayerFromFile(p, tarball.WithCompressedCaching)
		if err != nil {
			return "", fmt.Errorf("files layer: %w", err)
		}
		layers = append(layers, l)
	}

	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		return "", fmt.Errorf("append layers: %w", err)
	}
	cfg, err := o.config()
	if err != nil {
		return "", err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return "", fmt.Errorf("config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.Config = cfg
	// ctr imports only images of the host's platform by default.
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return "", fmt.Errorf("config: %w", err)
	}

	refs := map[name.Reference]v1.Image{}
	for _, t := range o.Tags {
		ref, err := name.NewTag(t)
		if err != nil {
			return "", fmt.Errorf("tag %q: %w", t, err)
		}
		refs[ref] = img
	}
	out := filepath.Join(tmp, "image.tar")
	if err := tarball.MultiRefWriteToFile(out, refs); err != nil {
		return "", fmt.Errorf("write image: %w", err)
	}
	if err := os.Rename(out, o.Output); err != nil {
		return "", fmt.Errorf("write image: %w", err)
	}
	id, err := img.ConfigName()
	if err != nil {
		return "", fmt.Errorf("image id: %w", err)
	}
	return id.String(), nil
}

// layerFrom reads a layer tarball as it is, or packs a directory into scratch.
func layerFrom(src, scratch string) (v1.Layer, error) {
	st, err := os.Stat(src)
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	if st.IsDir() {
		if err := writeTarFile(scratch, func(w io.Writer) error { return writeDirTar(w, src) }); err != nil {
			return nil, err
		}
		src = scratch
	}
	// A gzip'd tarball is used as the compressed blob unchanged; a plain
	// one is compressed once and kept in memory for digest and write.
	l, err := tarball.LayerFromFile(src, tarball.WithCompressedCaching)
	if err != nil {
		return nil, fmt.Errorf("layer %s: %w", src, err)
	}
	return l, nil
}

func writeTarFile(p string, write func(io.Writer) error) error {
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (o *Options) config() (v1.Config, error) {
	labels, err := keyValues(o.Labels)
	if err != nil {
		return v1.Config{}, fmt.Errorf("--label %w", err)
	}
	if _, err := keyValues(o.Env); err != nil {
		return v1.Config{}, fmt.Errorf("--env %w", err)
	}
	return v1.Config{
		Entrypoint: o.Entrypoint,
		Cmd:        o.Cmd,
		Env:        o.Env,
		WorkingDir: o.WorkingDir,
		User:       o.User,
		Labels:     labels,
	}, nil
}
