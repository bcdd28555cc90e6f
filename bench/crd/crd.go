package crd

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/generated/openapi"
)

// The twin's coordinates. The group differs from ours so both can be served
// by one cluster at the same time; kind, version and resource are the same.
const (
	Group    = "virtbench.kubevirt.io"
	Version  = "v1"
	Kind     = "VirtualMachineInstance"
	Resource = "virtualmachineinstances"
	// Name is the CRD's metadata.name.
	Name = Resource + "." + Group
)

// Model names that structural schemas spell differently from OpenAPI.
var (
	quantityModel = "io.k8s.apimachinery.pkg.api.resource.Quantity"
	intOrString   = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
	timeModel     = "io.k8s.apimachinery.pkg.apis.meta.v1.Time"
	objectMeta    = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
)

// formats the kube-apiserver validates; others are dropped rather than
// passed through as free text.
var formats = map[string]bool{"int32": true, "int64": true, "float": true, "double": true, "byte": true, "date-time": true, "date": true}

// VMI returns the CRD twin of VirtualMachineInstance: namespaced, the same
// short names, status subresource, and a structural schema of our v1 types.
func VMI() (*apiextensionsv1.CustomResourceDefinition, error) {
	defs := openapi.GetOpenAPIDefinitions(func(name string) spec.Ref { return spec.MustCreateRef(name) })
	c := converter{defs: defs}
	root, err := c.model(virtv1.VirtualMachineInstance{}.OpenAPIModelName())
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", Kind, err)
	}
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: Name},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: Group,
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: Resource, Singular: "virtualmachineinstance", Kind: Kind,
				ListKind: Kind + "List", ShortNames: []string{"bvmi"},
			},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: Version, Served: true, Storage: true,
				Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: root},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
					{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
					{Name: "Phase", Type: "string", JSONPath: ".status.phase"},
					{Name: "NodeName", Type: "string", JSONPath: ".status.nodeName"},
				},
			}},
		},
	}, nil
}

// converter inlines OpenAPI definitions into one structural schema.
type converter struct {
	defs map[string]common.OpenAPIDefinition
	// stack holds the models being converted: a model inside itself would
	// never end, and structural schemas cannot refer to anything.
	stack []string
}

func (c *converter) model(name string) (*apiextensionsv1.JSONSchemaProps, error) {
	switch name {
	case quantityModel, intOrString:
		// What controller-gen writes for these: either form is accepted.
		return &apiextensionsv1.JSONSchemaProps{
			XIntOrString: true,
			AnyOf:        []apiextensionsv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}},
		}, nil
	case timeModel:
		return &apiextensionsv1.JSONSchemaProps{Type: "string", Format: "date-time"}, nil
	case objectMeta:
		// The kube-apiserver validates metadata itself; a CRD may only say object.
		return &apiextensionsv1.JSONSchemaProps{Type: "object"}, nil
	}
	for _, s := range c.stack {
		if s == name {
			return nil, fmt.Errorf("model %s contains itself (%s)", name, strings.Join(c.stack, " > "))
		}
	}
	def, ok := c.defs[name]
	if !ok {
		return nil, fmt.Errorf("no OpenAPI definition of %s", name)
	}
	c.stack = append(c.stack, name)
	defer func() { c.stack = c.stack[:len(c.stack)-1] }()
	out, err := c.schema(&def.Schema)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

func (c *converter) schema(s *spec.Schema) (*apiextensionsv1.JSONSchemaProps, error) {
	if ref := s.Ref.String(); ref != "" {
		out, err := c.model(ref)
		if err != nil {
			return nil, err
		}
		// A property's own description says more than its type's.
		if s.Description != "" {
			cp := *out
			cp.Description = s.Description
			out = &cp
		}
		return out, nil
	}
	// Properties whose schema is only an allOf of one reference (how
	// openapi-gen writes a described reference).
	if len(s.AllOf) == 1 && len(s.Properties) == 0 {
		inner := s.AllOf[0]
		if inner.Description == "" {
			inner.Description = s.Description
		}
		return c.schema(&inner)
	}
	out := &apiextensionsv1.JSONSchemaProps{
		Description: s.Description,
		Required:    s.Required,
		Nullable:    s.Nullable,
		Pattern:     s.Pattern,
		MaxLength:   s.MaxLength,
		MinLength:   s.MinLength,
		MaxItems:    s.MaxItems,
		MinItems:    s.MinItems,
		Maximum:     s.Maximum,
		Minimum:     s.Minimum,
	}
	if formats[s.Format] {
		out.Format = s.Format
	}
	for _, e := range s.Enum {
		raw, err := jsonValue(e)
		if err != nil {
			return nil, err
		}
		out.Enum = append(out.Enum, raw)
	}
	switch len(s.Type) {
	case 0:
		if len(s.Properties) > 0 || s.AdditionalProperties != nil {
			out.Type = "object"
		}
	case 1:
		out.Type = s.Type[0]
	default:
		return nil, fmt.Errorf("several types %v", s.Type)
	}
	if len(s.Properties) > 0 {
		out.Properties = map[string]apiextensionsv1.JSONSchemaProps{}
		names := make([]string, 0, len(s.Properties))
		for n := range s.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			p := s.Properties[n]
			ps, err := c.schema(&p)
			if err != nil {
				return nil, fmt.Errorf("property %s: %w", n, err)
			}
			out.Properties[n] = *ps
		}
	}
	if ap := s.AdditionalProperties; ap != nil && ap.Schema != nil {
		as, err := c.schema(ap.Schema)
		if err != nil {
			return nil, fmt.Errorf("additionalProperties: %w", err)
		}
		out.AdditionalProperties = &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: as}
	}
	if s.Items != nil {
		if s.Items.Schema == nil {
			return nil, fmt.Errorf("array of several item schemas")
		}
		is, err := c.schema(s.Items.Schema)
		if err != nil {
			return nil, fmt.Errorf("items: %w", err)
		}
		out.Items = &apiextensionsv1.JSONSchemaPropsOrArray{Schema: is}
	}
	if out.Type == "" && !out.XIntOrString {
		// Free-form values (runtime.RawExtension and the like).
		out.XPreserveUnknownFields = ptrTrue()
	}
	return out, nil
}

func ptrTrue() *bool { t := true; return &t }
func jsonValue(v any) (apiextensionsv1.JSON, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return apiextensionsv1.JSON{}, fmt.Errorf("enum value %v: %w", v, err)
	}
	return apiextensionsv1.JSON{Raw: b}, nil
}
