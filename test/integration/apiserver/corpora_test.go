package apiserver

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"kubevirt.dev/virt/apiserver/testserver"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	"kubevirt.dev/virt/test/compat"
)

// TestCorpora sends every manifest of the corpora (manifests written by
// others: the KubeVirt user guide's and blogs', common-templates',
// Harvester's, KubeVirt's own examples; ../shared/kubevirt-manifests), with
// only its apiVersion changed, to the real server as kubectl create does
// with strict field validation. Instancetypes and preferences are created
// first, after the platform's catalogue (artifacts/instancetypes) and the
// test's setup, so that the VMs referring to them find them; the rest is
// created with a dry run. Each is accepted, or refused with a 422 whose
// causes are exactly the fields and reasons the expectation file names:
// a new refusal fails, and so does a refusal that went without the file
// saying so. None is a 400 (an unknown field) or a 5xx.
func TestCorpora(t *testing.T) {
	s := testserver.Start(t, t.TempDir())
	client := newClient(t, s.ClientConfig)
	createCatalogue(t, client)
	manifests, err := compat.CorpusManifests()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range manifests {
		t.Run(m.Path, func(t *testing.T) {
			err := send(t, client, m.Moved(), !m.Sizing())
			if st, ok := err.(apierrors.APIStatus); ok && st.Status().Code != 422 {
				t.Fatalf("create: %d %v; want it created or a 422 that names the field", st.Status().Code, err)
			}
			if m.Accepted {
				if err != nil {
					t.Errorf("create: %v", err)
					t.Logf("EXPECT.tsv would say:\n%s", expectation(m.Path, err))
				}
				return
			}
			if err == nil {
				t.Fatalf("created; EXPECT.tsv wants it refused (%v): make it %s\taccepted", m.Refusals, m.Path)
			}
			// wantRefusals takes the causes it finds out of the error's.
			said := expectation(m.Path, err)
			if wantRefusals(t, m.Refusals, err); t.Failed() {
				t.Logf("EXPECT.tsv would say:\n%s", said)
			}
		})
	}
	accepted, marked, refused := compat.GuideAccepted(manifests)
	t.Logf("of the %d user-guide manifests its guide marks accept, %d are accepted; refused: %s", marked, accepted, strings.Join(refused, ", "))
	// Issue 27's bar: all but three (those that need what the platform
	// lacks, and say so).
	if accepted < marked-3 {
		t.Errorf("%d of the %d user-guide manifests marked accept are accepted, want at least %d", accepted, marked, marked-3)
	}
}

// send creates the object of manifest, with a dry run if dryRun.
func send(t *testing.T, client virtclient.Interface, manifest []byte, dryRun bool) error {
	t.Helper()
	body, err := yaml.YAMLToJSON(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var obj struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        metav1.ObjectMeta `json:"metadata"`
	}
	if err := yaml.Unmarshal(body, &obj); err != nil {
		t.Fatal(err)
	}
	// Each resource is its kind's lower-case plural; the cluster kinds'
	// have no namespace.
	req := client.VirtualizationV1().RESTClient().Post().Resource(strings.ToLower(obj.Kind) + "s")
	if !strings.HasPrefix(obj.Kind, "VirtualMachineCluster") {
		req = req.Namespace(ns)
	}
	if dryRun {
		req = req.Param("dryRun", "All")
	}
	return req.Param("fieldValidation", "Strict").SetHeader("Content-Type", "application/json").
		Body(body).Do(t.Context()).Error()
}

// createCatalogue creates the instancetypes and preferences the platform
// ships, as make up does, so that the corpora's VMs find u1.small, fedora
// and the others by their KubeVirt names.
func createCatalogue(t *testing.T, client virtclient.Interface) {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "artifacts", "instancetypes")
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil || len(k.Resources) == 0 {
		t.Fatalf("read the catalogue's kustomization: %v", err)
	}
	for _, r := range k.Resources {
		data, err := os.ReadFile(filepath.Join(dir, r))
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(data, []byte("\n---\n")) {
			if !bytes.Contains(doc, []byte("\nkind: ")) {
				continue
			}
			if err := send(t, client, doc, false); err != nil {
				t.Fatalf("create the catalogue's %s: %v", r, err)
			}
		}
	}
}

// expectation is what EXPECT.tsv would say of path given err, so that a
// change that refuses or accepts more is reviewed as a change of that file.
func expectation(path string, err error) string {
	var lines []string
	if st, ok := err.(apierrors.APIStatus); ok && st.Status().Details != nil {
		for _, c := range st.Status().Details.Causes {
			lines = append(lines, fmt.Sprintf("%s\trefused\t%s\t%s", path, c.Field, c.Message))
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
