package boundary

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// registryHost matches the host names of package and image registries and
// of distribution mirrors. The project takes what it downloads from the
// host's own configuration (apt's sources for Debian, GOPROXY for Go
// modules, containerd's for images), so that a machine behind a mirror of
// its own works as it is; a literal host in a file would bypass it. The
// names are written as patterns (escaped dots) so that this file does not
// name them either. Examples use registry.example (RFC 2606).
var registryHost = regexp.MustCompile(`(?i)\b(` + strings.Join([]string{
	`(deb|ftp|security|httpredir|cdn-fastly)\.debian\.org`,
	`(archive|security|ports)\.ubuntu\.com`,
	`(proxy|sum|index)\.golang\.org`, `goproxy\.(io|cn)`,
	`pypi\.(org|python\.org)`, `files\.pythonhosted\.org`,
	`registry\.(npmjs\.org|yarnpkg\.com)`, `(static\.)?crates\.io`, `rubygems\.org`, `repo1?\.maven\.org`,
	`([a-z0-9-]+\.)?docker\.io`, `quay\.io`, `([a-z0-9-]+\.)?gcr\.io`, `registry\.k8s\.io`, `ghcr\.io`,
	`mcr\.microsoft\.com`, `public\.ecr\.aws`,
	`dl-cdn\.alpinelinux\.org`, `mirror\.centos\.org`, `dl\.fedoraproject\.org`,
}, "|") + `)\b`)

func TestNoRegistryHost(t *testing.T) {
	root := moduleRoot(t)
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	if len(files) < 100 {
		t.Fatalf("git ls-files listed %d files: not this project", len(files))
	}
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		if err != nil {
			t.Fatal(err)
		}
		if bytes.IndexByte(raw, 0) >= 0 {
			continue // binary
		}
		for _, hit := range registryLines(raw) {
			t.Errorf("%s:%s: names a registry's host; take it from the host's configuration (or use registry.example in an example)", f, hit)
		}
	}
}

// registryLines are the lines of a file that name a registry's host.
func registryLines(raw []byte) []string {
	var hits []string
	for i, line := range strings.Split(string(raw), "\n") {
		if m := registryHost.FindString(line); m != "" {
			hits = append(hits, fmt.Sprintf("%d: %s", i+1, m))
		}
	}
	return hits
}

// TestRegistryHostCatches proves the pattern finds what it must and leaves
// module paths and neutral examples alone.
func TestRegistryHostCatches(t *testing.T) {
	for _, line := range []string{
		"MIRROR=http://deb" + ".debian.org/debian",
		"GOPROXY=https://proxy" + ".golang.org,direct",
		"image: quay" + ".io/containerdisks/fedora:40",
		"pip install -i https://pypi" + ".org/simple x",
		"image: docker" + ".io/library/busybox",
		"image: registry" + ".k8s.io/pause:3.10",
	} {
		if len(registryLines([]byte(line))) != 1 {
			t.Errorf("not caught: %q", line)
		}
	}
	for _, line := range []string{
		"k8s.io/client-go v0.37.2",
		"golang.org/x/sys v0.47.0",
		"image: registry.example/containerdisks/fedora:40",
		"the Go module proxy",
	} {
		if hits := registryLines([]byte(line)); len(hits) != 0 {
			t.Errorf("caught %q: %v", line, hits)
		}
	}
}
