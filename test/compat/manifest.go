package compat

import (
	"bufio"
	"bytes"
	"embed"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
)

// KubeVirtAPIVersion and KubeVirtInstancetypeAPIVersion are the
// apiVersions a manifest is written with (KubeVirt serves instancetypes
// and preferences in a group of their own); APIVersion is the one it
// moves over to.
const (
	KubeVirtAPIVersion             = "kubevirt.io/v1"
	KubeVirtInstancetypeAPIVersion = "instancetype.kubevirt.io/v1beta1"
	APIVersion                     = "virtualization.kubevirt.io/v1"
)

var kubeVirtAPIVersions = []string{KubeVirtAPIVersion, KubeVirtInstancetypeAPIVersion}

//go:embed testdata/*.yaml
var testdata embed.FS

// Manifest is one KubeVirt manifest and what the platform must do with it.
type Manifest struct {
	// Name is the file name without .yaml.
	Name string
	// KubeVirt is the manifest as written for KubeVirt (kubevirt.io/v1).
	KubeVirt []byte
	// Accepted says the platform accepts the manifest; otherwise Refusals
	// lists every field error of the 422.
	Accepted bool
	// Refusals are the field errors of the 422, one per path.
	Refusals []Refusal
	// Warnings are substrings of the API warnings the create must return.
	Warnings []string
	// Needs are the node capabilities (internal/capability) an accepted
	// manifest needs: the API takes it only when a Ready node reports them.
	Needs []string
}

// Refusal is one field error of a refused manifest.
type Refusal struct {
	// Path is the field path, such as spec.domain.devices.gpus.
	Path string
	// Message is a part of the error's message (its detail) that says what
	// is not supported and why.
	Message string
}

// Moved is the manifest with only its apiVersion changed, as its user would
// move it over.
func (m Manifest) Moved() []byte {
	for _, v := range kubeVirtAPIVersions {
		if line := []byte("\napiVersion: " + v + "\n"); bytes.Contains(m.KubeVirt, line) {
			return bytes.Replace(m.KubeVirt, line, []byte("\napiVersion: "+APIVersion+"\n"), 1)
		}
	}
	return m.KubeVirt
}

// Manifests returns every manifest, sorted by name. The expectations are the
// file's leading comment lines:
//
//	# expect: accepted
//	# expect: refused
//	# refused: <field path>: <part of the message>
//	# warning: <part of a warning>
//	# needs: <node capability>
func Manifests() ([]Manifest, error) {
	files, err := testdata.ReadDir("testdata")
	if err != nil {
		return nil, err
	}
	var out []Manifest
	for _, f := range files {
		data, err := testdata.ReadFile(path.Join("testdata", f.Name()))
		if err != nil {
			return nil, err
		}
		m, err := parse(strings.TrimSuffix(f.Name(), ".yaml"), data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name(), err)
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func parse(name string, data []byte) (Manifest, error) {
	m := Manifest{Name: name, KubeVirt: data}
	expect := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "#") {
			break
		}
		key, value, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "#")), ":")
		if !ok {
			continue
		}
		value = strings.TrimSpace(value)
		switch key {
		case "expect":
			expect = value
		case "refused":
			p, msg, ok := strings.Cut(value, ": ")
			if !ok {
				return m, fmt.Errorf("refused line %q is not <path>: <message>", line)
			}
			m.Refusals = append(m.Refusals, Refusal{Path: p, Message: msg})
		case "warning":
			m.Warnings = append(m.Warnings, value)
		case "needs":
			m.Needs = append(m.Needs, value)
		}
	}
	switch {
	case expect == "accepted" && len(m.Refusals) == 0:
		m.Accepted = true
	case expect == "refused" && len(m.Refusals) > 0:
	default:
		return m, fmt.Errorf("needs '# expect: accepted', or '# expect: refused' with '# refused:' lines")
	}
	if !slices.ContainsFunc(kubeVirtAPIVersions, func(v string) bool { return bytes.Contains(data, []byte("\napiVersion: "+v+"\n")) }) {
		return m, fmt.Errorf("is not a manifest of %s", strings.Join(kubeVirtAPIVersions, " or "))
	}
	return m, nil
}
