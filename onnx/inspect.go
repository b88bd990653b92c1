package onnx

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers read (never written) by Inspect, from onnx/onnx.proto.
const (
	fAttrGraphs       protowire.Number = 11 // AttributeProto.graphs (repeated GraphProto)
	fTensorExternal   protowire.Number = 13 // TensorProto.external_data (repeated StringStringEntryProto)
	fTensorFloatData  protowire.Number = 4  // TensorProto.float_data (repeated float)
	fTensorInt64Data  protowire.Number = 7  // TensorProto.int64_data (repeated int64)
	fStringEntryKey   protowire.Number = 1  // StringStringEntryProto.key
	fStringEntryValue protowire.Number = 2  // StringStringEntryProto.value
)

// typeKinds are TypeProto's value fields other than tensor_type.
var typeKinds = map[protowire.Number]string{
	4: "sequence",      // TypeProto.sequence_type
	5: "map",           // TypeProto.map_type
	8: "sparse_tensor", // TypeProto.sparse_tensor_type
	9: "optional",      // TypeProto.optional_type
}

// Summary is what Inspect reads from a serialised model without running it: its
// interface (with symbolic dim names, which ONNX Runtime's Go binding does not
// expose), its operators and its size.
type Summary struct {
	IRVersion        int64
	Opsets           []Opset
	Inputs, Outputs  []ValueInfo    // graph inputs that are not initializers
	Ops              map[string]int // "Op" or "domain:Op" → node count, subgraphs included
	Params           int64          // floating-point initializer elements: the weights
	InitializerBytes int64          // initializer bytes, in the file or in external data
	External         bool           // some initializers live in external data files
}

// InspectFile reads a model file and summarises it.
func InspectFile(path string) (*Summary, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := Inspect(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Inspect summarises a serialised ModelProto. Bytes that are not one give an error
// saying so, with where decoding stopped.
func Inspect(data []byte) (*Summary, error) {
	if len(data) == 0 {
		return nil, errors.New("not an ONNX model: the file is empty")
	}
	s := &Summary{Ops: map[string]int{}}
	var graph []byte
	err := fields(data, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch {
		case num == fModelIRVersion && typ == protowire.VarintType:
			s.IRVersion = int64(x)
		case num == fModelGraph && typ == protowire.BytesType:
			graph = v
		case num == fModelOpsetImport && typ == protowire.BytesType:
			var o Opset
			if err := fields(v, func(n protowire.Number, t protowire.Type, b []byte, x uint64) error {
				switch {
				case n == fOpsetDomain && t == protowire.BytesType:
					o.Domain = string(b)
				case n == fOpsetVersion && t == protowire.VarintType:
					o.Version = int64(x)
				}
				return nil
			}); err != nil {
				return err
			}
			s.Opsets = append(s.Opsets, o)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("not an ONNX model: %w", err)
	}
	if graph == nil || s.IRVersion == 0 {
		return nil, errors.New("not an ONNX model: no ir_version or graph (a truncated or foreign file)")
	}
	initializers := map[string]bool{}
	if err := s.readGraph(graph, initializers, true); err != nil {
		return nil, fmt.Errorf("not an ONNX model: graph: %w", err)
	}
	inputs := s.Inputs[:0]
	for _, in := range s.Inputs {
		if !initializers[in.Name] {
			inputs = append(inputs, in)
		}
	}
	s.Inputs = inputs
	return s, nil
}

// OpNames lists the operators used, sorted.
func (s *Summary) OpNames() []string {
	names := make([]string, 0, len(s.Ops))
	for op := range s.Ops {
		names = append(names, op)
	}
	sort.Strings(names)
	return names
}

func (s *Summary) readGraph(g []byte, initializers map[string]bool, top bool) error {
	return fields(g, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case fGraphNode:
			return s.readNode(v, initializers)
		case fGraphInitializer:
			name, err := s.readTensor(v)
			initializers[name] = true
			return err
		case fGraphInput, fGraphOutput:
			if !top {
				return nil
			}
			vi, err := readValueInfo(v)
			if err != nil {
				return err
			}
			if num == fGraphInput {
				s.Inputs = append(s.Inputs, vi)
			} else {
				s.Outputs = append(s.Outputs, vi)
			}
		}
		return nil
	})
}

func (s *Summary) readNode(n []byte, initializers map[string]bool) error {
	var op, domain string
	err := fields(n, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case fNodeOpType:
			op = string(v)
		case fNodeDomain:
			domain = string(v)
		case fNodeAttribute:
			// Subgraphs (If, Loop, Scan bodies) hold nodes and weights too.
			return fields(v, func(an protowire.Number, at protowire.Type, av []byte, _ uint64) error {
				if at == protowire.BytesType && (an == fAttrG || an == fAttrGraphs) {
					return s.readGraph(av, initializers, false)
				}
				if at == protowire.BytesType && an == fAttrT {
					_, err := s.readTensor(av)
					return err
				}
				return nil
			})
		}
		return nil
	})
	if domain != "" && domain != "ai.onnx" {
		op = domain + ":" + op
	}
	s.Ops[op]++
	return err
}

// readTensor adds a TensorProto's size and returns its name.
func (s *Summary) readTensor(t []byte) (string, error) {
	var name string
	var dims []int64
	var typ DataType
	var raw, inline int64
	var external int64 = -1
	err := fields(t, func(num protowire.Number, wt protowire.Type, v []byte, x uint64) error {
		switch {
		case num == fTensorDims && wt == protowire.VarintType:
			dims = append(dims, int64(x))
		case num == fTensorDims && wt == protowire.BytesType: // packed
			for len(v) > 0 {
				d, n := protowire.ConsumeVarint(v)
				if n < 0 {
					return protowire.ParseError(n)
				}
				dims = append(dims, int64(d))
				v = v[n:]
			}
		case num == fTensorDataType && wt == protowire.VarintType:
			typ = DataType(x)
		case num == fTensorName && wt == protowire.BytesType:
			name = string(v)
		case num == fTensorRawData && wt == protowire.BytesType:
			raw = int64(len(v))
		case (num == fTensorFloatData || num == fTensorInt64Data) && wt == protowire.BytesType:
			inline += int64(len(v))
		case num == fTensorExternal && wt == protowire.BytesType:
			s.External = true
			return fields(v, func(n protowire.Number, _ protowire.Type, b []byte, _ uint64) error {
				if n == fStringEntryKey && string(b) == "length" {
					external = 0 // the value follows
				} else if n == fStringEntryValue && external == 0 {
					external, _ = strconv.ParseInt(string(b), 10, 64)
				}
				return nil
			})
		}
		return nil
	})
	elems := int64(1)
	for _, d := range dims {
		elems *= d
	}
	if typ == Float32 || typ == Float16 || typ == Float64 || typ == BFloat16 {
		s.Params += elems // weights; integer constants (shapes, axes) are not parameters
	}
	switch {
	case raw > 0:
		s.InitializerBytes += raw
	case external > 0:
		s.InitializerBytes += external
	case typ.Size() > 0:
		s.InitializerBytes += elems * int64(typ.Size())
	default:
		s.InitializerBytes += inline
	}
	return name, err
}

func readValueInfo(b []byte) (ValueInfo, error) {
	var vi ValueInfo
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case fValueInfoName:
			vi.Name = string(v)
		case fValueInfoType:
			return fields(v, func(n protowire.Number, t protowire.Type, tv []byte, _ uint64) error {
				if t != protowire.BytesType {
					return nil
				}
				if kind, ok := typeKinds[n]; ok {
					vi.Kind = kind
					return nil
				}
				if n != fTypeTensorType {
					return nil
				}
				vi.Unranked = true // until a shape is read
				return fields(tv, func(n protowire.Number, t protowire.Type, sv []byte, x uint64) error {
					switch {
					case n == fTypeTensorElemType && t == protowire.VarintType:
						vi.Type = DataType(x)
					case n == fTypeTensorShape && t == protowire.BytesType:
						vi.Unranked = false
						return fields(sv, func(n protowire.Number, t protowire.Type, dv []byte, _ uint64) error {
							if n != fShapeDim || t != protowire.BytesType {
								return nil
							}
							d := Dim{Value: -1}
							err := fields(dv, func(n protowire.Number, t protowire.Type, b []byte, x uint64) error {
								switch {
								case n == fDimValue && t == protowire.VarintType:
									d.Value = int64(x)
								case n == fDimParam && t == protowire.BytesType:
									d.Param = string(b)
								}
								return nil
							})
							vi.Dims = append(vi.Dims, d)
							return err
						})
					}
					return nil
				})
			})
		}
		return nil
	})
	return vi, err
}

// fields walks one message's fields: v holds a length-delimited field's bytes, x a
// varint's or a fixed-width field's value.
func fields(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("bad field tag: %w", protowire.ParseError(n))
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.Fixed32Type: // an unpacked float
			var u uint32
			u, n = protowire.ConsumeFixed32(b)
			x = uint64(u)
		case protowire.Fixed64Type: // an unpacked double
			x, n = protowire.ConsumeFixed64(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("field %d: %w", num, protowire.ParseError(n))
		}
		b = b[n:]
		if err := f(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}
