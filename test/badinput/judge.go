package badinput

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// Judge says whether a is a right answer to c: nil, or what is wrong with
// it. A refusal as the client's fault is right (400, 413, 415, 422; 409
// where a PUT or patch races the resourceVersion); a 2xx is right only
// where the input may be taken (Input.Taken) and the answer shows it was
// taken as it should be. Any other answer is wrong.
func Judge(c Input, a Answer) error {
	switch {
	case a.Code >= 200 && a.Code < 300:
		if c.Taken == nil {
			return fmt.Errorf("taken (%d), but the input is malformed and must be refused", a.Code)
		}
		if err := c.Taken(c, a); err != nil {
			return fmt.Errorf("taken (%d), wrongly: %w", a.Code, err)
		}
		return nil
	case a.Code == http.StatusBadRequest, a.Code == http.StatusRequestEntityTooLarge,
		a.Code == http.StatusUnsupportedMediaType, a.Code == http.StatusUnprocessableEntity:
		return nil
	case a.Code == http.StatusConflict && c.Method != http.MethodPost:
		return nil
	}
	return fmt.Errorf("%d is neither taking the input nor refusing it as the client's fault", a.Code)
}

// A Taking checks the answer to an input that may be taken: nil if the
// 2xx a is right.
type Taking func(c Input, a Answer) error

// WellFormed takes an input that makes a well-formed VMI: the object the
// request asks for (the body of a POST or PUT, the target with the patch
// applied, an apply's intent) decodes as a VirtualMachineInstance, every
// string in it valid UTF-8; a field the type does not have, or one given
// twice, may only be dropped with a warning (the default fieldValidation,
// Warn), never under Strict. And the answer is that VMI: the kind, the
// namespace, the name asked for. Whether a well-formed VMI is valid is the
// server's validation to say, not this check's: the cases that must fail
// validation are hand-written, without a Taking.
func WellFormed(c Input, a Answer) error {
	made, err := requested(c, a)
	if err != nil {
		return fmt.Errorf("the request is malformed: %w", err)
	}
	if !utf8.Valid(made) {
		return fmt.Errorf("the object asked for holds invalid UTF-8, which the server stored as something else")
	}
	var vmi virtv1.VirtualMachineInstance
	strict, err := sigsjson.UnmarshalStrict(made, &vmi, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		return fmt.Errorf("the object asked for is not a VirtualMachineInstance: %v", err)
	}
	if vmi.Kind != "" && vmi.Kind != "VirtualMachineInstance" || vmi.APIVersion != "" && vmi.APIVersion != virtv1.SchemeGroupVersion.String() {
		return fmt.Errorf("the object asked for is a %s %s", vmi.APIVersion, vmi.Kind)
	}
	if len(strict) > 0 {
		q, _ := url.ParseQuery(c.Query)
		switch v := q.Get("fieldValidation"); {
		case v == "Strict":
			return fmt.Errorf("taken under fieldValidation=Strict with %v", strict)
		case v != "Ignore" && len(a.Warnings) == 0:
			return fmt.Errorf("%v dropped without a warning", strict)
		}
	}
	var got virtv1.VirtualMachineInstance
	if err := json.Unmarshal(a.Body, &got); err != nil {
		return fmt.Errorf("the answer is not a VirtualMachineInstance: %v", err)
	}
	want := vmi.Name
	if c.Method != http.MethodPost {
		want = Target
	}
	switch {
	case got.Kind != "VirtualMachineInstance":
		return fmt.Errorf("the answer is a %q", got.Kind)
	case want != "" && got.Name != want, want == "" && !strings.HasPrefix(got.Name, vmi.GenerateName):
		return fmt.Errorf("the answer is VMI %q, want %q", got.Name, want)
	}
	return nil
}

// requested is the object a request asks for, as JSON.
func requested(c Input, a Answer) ([]byte, error) {
	mediaType := jsonType // what the server reads a body without a type as
	if c.ContentType != "" {
		var err error
		if mediaType, _, err = mime.ParseMediaType(c.ContentType); err != nil {
			return nil, fmt.Errorf("content type %q: %v", c.ContentType, err)
		}
	}
	switch mediaType {
	case jsonType:
		return a.Sent, nil
	case yamlType, applyType:
		return yaml.YAMLToJSONStrict(a.Sent)
	case mergeType:
		return jsonpatch.MergePatch(a.Before, a.Sent)
	case jsonPatchTyp:
		p, err := jsonpatch.DecodePatch(a.Sent)
		if err != nil {
			return nil, err
		}
		return p.Apply(a.Before)
	case strategicTyp:
		// The upstream strategic merge patch code converts its result to
		// the endpoint's type, dropping an apiVersion or kind the patch
		// set, as for every built-in resource: the object asked for keeps
		// the target's.
		patched, err := strategicpatch.StrategicMergePatch(a.Before, a.Sent, virtv1.VirtualMachineInstance{})
		if err != nil {
			return nil, err
		}
		var m map[string]any
		d := json.NewDecoder(bytes.NewReader(patched))
		d.UseNumber() // numbers as they were, not float64
		if err := d.Decode(&m); err != nil {
			return nil, err
		}
		before := decodeMap(a.Before)
		m["apiVersion"], m["kind"] = before["apiVersion"], before["kind"]
		return json.Marshal(m)
	}
	return nil, fmt.Errorf("content type %q carries no object the suite can read", c.ContentType)
}
