package finalizer

import (
	"encoding/json"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Has reports whether obj carries the finalizer name.
func Has(obj metav1.Object, name string) bool {
	return slices.Contains(obj.GetFinalizers(), name)
}

// RemovePatch is a JSON merge patch that removes names from obj's finalizers,
// and fails with a conflict if obj changed since the given version was read.
// It returns nil when obj carries none of the names.
func RemovePatch(obj metav1.Object, names ...string) ([]byte, error) {
	kept := make([]string, 0, len(obj.GetFinalizers()))
	for _, f := range obj.GetFinalizers() {
		if !slices.Contains(names, f) {
			kept = append(kept, f)
		}
	}
	if len(kept) == len(obj.GetFinalizers()) {
		return nil, nil
	}
	patch := map[string]any{"metadata": map[string]any{
		"resourceVersion": obj.GetResourceVersion(),
		"finalizers":      kept,
	}}
	b, err := json.Marshal(patch)
	if err != nil {
		return nil, fmt.Errorf("marshal finalizer patch: %w", err)
	}
	return b, nil
}
