package finalizer

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRemovePatch(t *testing.T) {
	tests := []struct {
		name       string
		finalizers []string
		remove     []string
		want       string
	}{
		{name: "one of two", finalizers: []string{"a", "b"}, remove: []string{"a"},
			want: `{"metadata":{"finalizers":["b"],"resourceVersion":"7"}}`},
		{name: "the last one", finalizers: []string{"a"}, remove: []string{"a", "b"},
			want: `{"metadata":{"finalizers":[],"resourceVersion":"7"}}`},
		{name: "none present", finalizers: []string{"c"}, remove: []string{"a"}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &metav1.ObjectMeta{ResourceVersion: "7", Finalizers: tt.finalizers}
			got, err := RemovePatch(obj, tt.remove...)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("RemovePatch() = %s, want %s", got, tt.want)
			}
		})
	}
	if !Has(&metav1.ObjectMeta{Finalizers: []string{"x"}}, "x") || Has(&metav1.ObjectMeta{}, "x") {
		t.Errorf("Has is wrong")
	}
}
