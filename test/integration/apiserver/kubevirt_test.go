package apiserver

import (
	"slices"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"kubevirt.dev/virt/apiserver/testserver"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	"kubevirt.dev/virt/test/compat"
)

// warnings collects the API warnings of the requests of one client.
type warnings struct {
	mu   sync.Mutex
	seen []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.seen
	w.seen = nil
	return out
}

// TestKubeVirtManifestsThroughTheServer sends every KubeVirt manifest of
// test/compat, with only its apiVersion changed, to the server as kubectl
// create --dry-run=server does (strict field validation, dry run): each is
// created (201) with the warnings its header names, or refused with a 422
// whose causes are exactly the fields and reasons its header names. None is
// a 400 for an unknown field.
func TestKubeVirtManifestsThroughTheServer(t *testing.T) {
	s := testserver.Start(t, t.TempDir())
	w := &warnings{}
	config := rest.CopyConfig(s.ClientConfig)
	config.WarningHandler = w
	client, err := virtclient.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	manifests, err := compat.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range manifests {
		t.Run(m.Name, func(t *testing.T) {
			body, err := yaml.YAMLToJSON(m.Moved())
			if err != nil {
				t.Fatal(err)
			}
			var meta metav1.TypeMeta
			if err := yaml.Unmarshal(body, &meta); err != nil {
				t.Fatal(err)
			}
			// Each resource is its kind's lower-case plural; the
			// cluster kinds' have no namespace.
			resource := strings.ToLower(meta.Kind) + "s"
			namespaced := !strings.HasPrefix(meta.Kind, "VirtualMachineCluster")
			w.take()
			req := client.VirtualizationV1().RESTClient().Post()
			if namespaced {
				req = req.Namespace(ns)
			}
			err = req.Resource(resource).
				Param("dryRun", "All").Param("fieldValidation", "Strict").
				SetHeader("Content-Type", "application/json").Body(body).Do(t.Context()).Error()
			got := w.take()
			if m.Accepted {
				if err != nil {
					t.Fatalf("create --dry-run=server: %v", err)
				}
			} else {
				wantRefusals(t, m.Refusals, err)
			}
			for _, want := range m.Warnings {
				if !slices.ContainsFunc(got, func(w string) bool { return strings.Contains(w, want) }) {
					t.Errorf("no warning contains %q; warnings: %q", want, got)
				}
			}
		})
	}
}

// wantRefusals wants a 422 with one cause at each expected path saying what
// the expectation says, and no other cause.
func wantRefusals(t *testing.T, want []compat.Refusal, err error) {
	t.Helper()
	st, ok := err.(apierrors.APIStatus)
	if !ok || st.Status().Code != 422 {
		t.Fatalf("create --dry-run=server: %v; want a 422 Invalid", err)
	}
	if st.Status().Details == nil {
		t.Fatalf("422 without causes: %v", err)
	}
	causes := st.Status().Details.Causes
	for _, r := range want {
		i := slices.IndexFunc(causes, func(c metav1.StatusCause) bool {
			return c.Field == r.Path && strings.Contains(c.Message, r.Message)
		})
		if i < 0 {
			t.Errorf("no cause at %s saying %q; causes: %v", r.Path, r.Message, causes)
			continue
		}
		causes = slices.Delete(causes, i, i+1)
	}
	for _, c := range causes {
		t.Errorf("unexpected cause: %s: %s", c.Field, c.Message)
	}
}
