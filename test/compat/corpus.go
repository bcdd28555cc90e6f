package compat

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// The corpora are manifests written by others, kept outside the project as
// they were published (../shared/kubevirt-manifests: "use them in tests, do
// not copy them into the project"): the KubeVirt user guide's, kubevirt.io
// blog posts', rendered common-templates', Harvester's, CDI's,
// cluster-api-provider-kubevirt's and an OpenShift sample's (userguide, each
// file's first line names its source), and KubeVirt's own examples
// directory (examples). The project keeps only what is its own: the
// expectations (testdata/corpora/EXPECT.tsv) and setup, what KubeVirt's
// examples refer to and take for granted (its examples' instancetypes
// csmall, clarge, cluster-csmall and preferences virtio, windows): a test
// creates them first, they are not the product's.
//
//go:embed testdata/corpora
var corpora embed.FS

const corporaDir = "testdata/corpora"

// ManifestsEnv names the directory holding the published corpora
// (userguide/ and examples/) when it is not ../shared/kubevirt-manifests
// beside the project or one of its parents.
const ManifestsEnv = "VIRT_KUBEVIRT_MANIFESTS"

// examplesSource is where KubeVirt's examples were taken from (their
// files have no source line of their own).
const examplesSource = "# source: kubevirt/kubevirt examples/ (commit d923fdb815)"

// Corpora are the directories of manifests written by others, in the order
// a test sends them.
var Corpora = []string{"setup", "userguide", "examples"}

// CorpusManifest is one published manifest of a corpus and what the
// platform must do with it, as the corpora's expectation file says.
type CorpusManifest struct {
	// Path is corpus/file, such as userguide/01-ug-vm-cirros-userdatabase64.yaml.
	Path string
	// Source is the manifest's first line: where it was published.
	Source string
	// Kind is the manifest's kind.
	Kind string
	// Published is the manifest as its source has it.
	Published []byte
	// Accepted says the platform accepts the manifest; otherwise Refusals
	// lists every field error of the 422. The setup's manifests are all
	// accepted.
	Accepted bool
	// Refusals are the field errors of the 422, one per cause.
	Refusals []Refusal
	// GuideAccept says the corpus's own guide (userguide/EXPECT.tsv)
	// marks the manifest as one a single-node platform with containerDisk,
	// PVC, emptyDisk, cloud-init, masquerade, bridge and instancetypes can
	// run. It is a guide, not the expectation.
	GuideAccept bool
}

// Setup says the manifest is one of the test's setup, not of a corpus.
func (m CorpusManifest) Setup() bool { return strings.HasPrefix(m.Path, "setup/") }

// Sizing says the manifest is an instancetype or a preference, which the
// VMs referring to it need to exist first.
func (m CorpusManifest) Sizing() bool {
	return strings.Contains(m.Kind, "Instancetype") || strings.Contains(m.Kind, "Preference")
}

var (
	apiVersionLine = regexp.MustCompile(`(?m)^apiVersion: (kubevirt\.io|instancetype\.kubevirt\.io)/v[0-9a-z]+$`)
	documentStart  = regexp.MustCompile(`(?m)^---\n`)
	kindLine       = regexp.MustCompile(`(?m)^kind: (\S+)$`)
)

// Moved is the manifest with its apiVersion changed to this platform's, as
// its user would move it over (KubeVirt's core group and its instancetype
// group both move to virtualization.kubevirt.io/v1). A file holds one
// object: its document start marker goes, so that the source lines before
// it do not make an empty first document.
func (m CorpusManifest) Moved() []byte {
	moved := documentStart.ReplaceAll(m.Published, nil)
	return apiVersionLine.ReplaceAll(moved, []byte("apiVersion: "+APIVersion))
}

// CorpusManifests returns every manifest of the corpora in the order a test
// sends them: the setup, then each corpus's instancetypes and preferences,
// then the rest, each part by path. Every manifest has an expectation in
// testdata/corpora/EXPECT.tsv and every expectation a manifest.
func CorpusManifests() ([]CorpusManifest, error) {
	expect, err := corpusExpectations()
	if err != nil {
		return nil, err
	}
	guide, err := guideAccepts()
	if err != nil {
		return nil, err
	}
	published, err := publishedCorpora()
	if err != nil {
		return nil, err
	}
	var out []CorpusManifest
	for _, corpus := range Corpora {
		fsys, dir := published, corpus
		if corpus == "setup" {
			fsys, dir = corpora, path.Join(corporaDir, corpus)
		}
		files, err := fs.Glob(fsys, path.Join(dir, "*.yaml"))
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("corpus %s has no manifests", corpus)
		}
		var sizing, rest []CorpusManifest
		for _, f := range files {
			data, err := fs.ReadFile(fsys, f)
			if err != nil {
				return nil, err
			}
			m := CorpusManifest{Path: path.Join(corpus, path.Base(f)), Published: data}
			m.Source, _, _ = strings.Cut(string(data), "\n")
			if corpus == "examples" {
				m.Source = examplesSource
			}
			if !strings.HasPrefix(m.Source, "# source: ") {
				return nil, fmt.Errorf("%s: the first line must name the source (# source: ...)", m.Path)
			}
			k := kindLine.FindSubmatch(data)
			if k == nil || bytes.Count(data, []byte("\nkind: ")) != 1 {
				return nil, fmt.Errorf("%s: want exactly one object with a kind", m.Path)
			}
			m.Kind = string(k[1])
			if !apiVersionLine.Match(data) && !bytes.Contains(data, []byte("\napiVersion: "+APIVersion+"\n")) {
				return nil, fmt.Errorf("%s: not a manifest of KubeVirt's groups or of %s", m.Path, APIVersion)
			}
			e, ok := expect[m.Path]
			switch {
			case m.Setup() && ok:
				return nil, fmt.Errorf("%s: the setup has no expectations, it must be created", m.Path)
			case m.Setup():
				e.accepted = true
			case !ok:
				return nil, fmt.Errorf("%s has no expectation in %s/EXPECT.tsv", m.Path, corporaDir)
			}
			delete(expect, m.Path)
			m.Accepted, m.Refusals = e.accepted, e.refusals
			m.GuideAccept = guide[m.Path]
			if m.Sizing() {
				sizing = append(sizing, m)
			} else {
				rest = append(rest, m)
			}
		}
		out = append(out, sizing...)
		out = append(out, rest...)
	}
	for p := range expect {
		return nil, fmt.Errorf("%s/EXPECT.tsv names %s, which is not a manifest", corporaDir, p)
	}
	return out, nil
}

type expectation struct {
	accepted bool
	refusals []Refusal
}

// corpusExpectations reads EXPECT.tsv: one line per accepted manifest
// (path, "accepted") and one per cause of a refused one (path, "refused",
// field path, a part of the message), tab-separated; # starts a comment.
func corpusExpectations() (map[string]expectation, error) {
	data, err := corpora.ReadFile(path.Join(corporaDir, "EXPECT.tsv"))
	if err != nil {
		return nil, err
	}
	out := map[string]expectation{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		e := out[f[0]]
		switch {
		case len(f) == 2 && f[1] == "accepted" && len(e.refusals) == 0 && !e.accepted:
			e.accepted = true
		case len(f) == 4 && f[1] == "refused" && !e.accepted && f[2] != "" && f[3] != "":
			e.refusals = append(e.refusals, Refusal{Path: f[2], Message: f[3]})
		default:
			return nil, fmt.Errorf("EXPECT.tsv:%d: want <path>\taccepted once, or <path>\trefused\t<field path>\t<part of the message> per cause", n)
		}
		out[f[0]] = e
	}
	return out, sc.Err()
}

// guideAccepts reads the user-guide corpus's own guide, its EXPECT.tsv as
// published with it: file, accept or refuse.
func guideAccepts() (map[string]bool, error) {
	published, err := publishedCorpora()
	if err != nil {
		return nil, err
	}
	data, err := fs.ReadFile(published, path.Join("userguide", "EXPECT.tsv"))
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		file, verdict, ok := strings.Cut(line, "\t")
		if !ok || (verdict != "accept" && verdict != "refuse") {
			return nil, fmt.Errorf("userguide/EXPECT.tsv: %q is not <file>\\taccept|refuse", line)
		}
		out[path.Join("userguide", file)] = verdict == "accept"
	}
	return out, nil
}

// GuideAccepted counts the user-guide manifests the guide marks accept and
// how many of them the expectations accept.
func GuideAccepted(ms []CorpusManifest) (accepted, marked int, refused []string) {
	for _, m := range ms {
		if !m.GuideAccept {
			continue
		}
		marked++
		if m.Accepted {
			accepted++
		} else {
			refused = append(refused, m.Path)
		}
	}
	sort.Strings(refused)
	return accepted, marked, refused
}

// publishedCorpora finds the published corpora: $VIRT_KUBEVIRT_MANIFESTS,
// else shared/kubevirt-manifests in the working directory's closest
// ancestor that has one (../shared beside the project's checkout). A test
// that needs them fails with how to provide them when they are missing.
func publishedCorpora() (fs.FS, error) {
	dir := os.Getenv(ManifestsEnv)
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		for d := wd; ; d = filepath.Dir(d) {
			candidate := filepath.Join(d, "shared", "kubevirt-manifests")
			if _, err := os.Stat(filepath.Join(candidate, "userguide")); err == nil {
				dir = candidate
				break
			}
			if filepath.Dir(d) == d {
				return nil, fmt.Errorf("the KubeVirt manifests written by others (userguide/, examples/) are not in shared/kubevirt-manifests beside %s or any parent: set %s to their directory", wd, ManifestsEnv)
			}
		}
	}
	for _, corpus := range []string{"userguide", "examples"} {
		if _, err := os.Stat(filepath.Join(dir, corpus)); err != nil {
			return nil, errors.Join(fmt.Errorf("%s=%s must hold userguide/ and examples/", ManifestsEnv, dir), err)
		}
	}
	return os.DirFS(dir), nil
}
