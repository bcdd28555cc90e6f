package image

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// Options describe one image.
type Options struct {
	// Output is the docker-archive tarball to write.
	Output string
	// Tags are the references the image is imported under.
	Tags []string
	// Layers are, in order, layer tarballs (plain or gzip) or directories
	// whose contents become a layer each.
	Layers []string
	// Files are "DEST=SRC[:MODE]" pairs that go into one more, last layer;
	// MODE is octal and defaults to SRC's permission bits.
	Files []string

	Entrypoint []string
	Cmd        []string
	Env        []string
	WorkingDir string
	User       string
	Labels     []string
}

// AddFlags binds the options to command-line flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.Output, "output", "o", "", "docker-archive tarball to write")
	fs.StringArrayVarP(&o.Tags, "tag", "t", nil, "image reference, e.g. localhost/virt-apiserver:dev (repeatable)")
	fs.StringArrayVar(&o.Layers, "layer", nil, "layer tarball (plain or gzip) or directory, in order (repeatable)")
	fs.StringArrayVar(&o.Files, "add", nil, "DEST=SRC[:MODE] file of the last layer (repeatable)")
	fs.StringArrayVar(&o.Entrypoint, "entrypoint", nil, "entrypoint argument (repeatable)")
	fs.StringArrayVar(&o.Cmd, "cmd", nil, "command argument (repeatable)")
	fs.StringArrayVar(&o.Env, "env", nil, "KEY=VALUE environment (repeatable)")
	fs.StringVar(&o.WorkingDir, "workdir", "", "working directory")
	fs.StringVar(&o.User, "user", "", "user[:group] the entrypoint runs as")
	fs.StringArrayVar(&o.Labels, "label", nil, "KEY=VALUE image label (repeatable)")
}

// file is one entry of the files layer.
type file struct {
	dest string
	src  string
	mode os.FileMode
}

func (o *Options) validate() error {
	if o.Output == "" {
		return fmt.Errorf("--output is required")
	}
	if len(o.Tags) == 0 {
		return fmt.Errorf("at least one --tag is required")
	}
	return nil
}

func (o *Options) files() ([]file, error) {
	var out []file
	for _, spec := range o.Files {
		dest, src, ok := strings.Cut(spec, "=")
		if !ok || !strings.HasPrefix(dest, "/") || src == "" {
			return nil, fmt.Errorf("--add %q: want /DEST=SRC[:MODE]", spec)
		}
		f := file{dest: dest, src: src}
		if i := strings.LastIndex(src, ":"); i >= 0 {
			m, err := strconv.ParseUint(src[i+1:], 8, 32)
			if err != nil {
				return nil, fmt.Errorf("--add %q: mode: %w", spec, err)
			}
			f.src, f.mode = src[:i], os.FileMode(m)
		}
		st, err := os.Stat(f.src)
		if err != nil {
			return nil, fmt.Errorf("--add %q: %w", spec, err)
		}
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("--add %q: %s is not a regular file", spec, f.src)
		}
		if f.mode == 0 {
			f.mode = st.Mode().Perm()
		}
		out = append(out, f)
	}
	return out, nil
}

func keyValues(kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q: want KEY=VALUE", kv)
		}
		m[k] = v
	}
	return m, nil
}
