package onnx

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers and enum values from the ONNX specification (onnx/onnx.proto,
// IR version 8). They are written out by hand rather than generated with
// protoc so that the package has no build-time code generation and the wire
// format it emits can be read next to the spec. Every constant names the
// message and field it encodes.
const (
	// message ModelProto
	fModelIRVersion       protowire.Number = 1 // ModelProto.ir_version (int64)
	fModelProducerName    protowire.Number = 2 // ModelProto.producer_name (string)
	fModelProducerVersion protowire.Number = 3 // ModelProto.producer_version (string)
	fModelDomain          protowire.Number = 4 // ModelProto.domain (string)
	fModelModelVersion    protowire.Number = 5 // ModelProto.model_version (int64)
	fModelDocString       protowire.Number = 6 // ModelProto.doc_string (string)
	fModelGraph           protowire.Number = 7 // ModelProto.graph (GraphProto)
	fModelOpsetImport     protowire.Number = 8 // ModelProto.opset_import (repeated OperatorSetIdProto)

	// message OperatorSetIdProto
	fOpsetDomain  protowire.Number = 1 // OperatorSetIdProto.domain (string)
	fOpsetVersion protowire.Number = 2 // OperatorSetIdProto.version (int64)

	// message GraphProto
	fGraphNode        protowire.Number = 1  // GraphProto.node (repeated NodeProto)
	fGraphName        protowire.Number = 2  // GraphProto.name (string)
	fGraphInitializer protowire.Number = 5  // GraphProto.initializer (repeated TensorProto)
	fGraphDocString   protowire.Number = 10 // GraphProto.doc_string (string)
	fGraphInput       protowire.Number = 11 // GraphProto.input (repeated ValueInfoProto)
	fGraphOutput      protowire.Number = 12 // GraphProto.output (repeated ValueInfoProto)

	// message NodeProto
	fNodeInput     protowire.Number = 1 // NodeProto.input (repeated string)
	fNodeOutput    protowire.Number = 2 // NodeProto.output (repeated string)
	fNodeName      protowire.Number = 3 // NodeProto.name (string)
	fNodeOpType    protowire.Number = 4 // NodeProto.op_type (string)
	fNodeAttribute protowire.Number = 5 // NodeProto.attribute (repeated AttributeProto)
	fNodeDomain    protowire.Number = 7 // NodeProto.domain (string)

	// message AttributeProto
	fAttrName    protowire.Number = 1  // AttributeProto.name (string)
	fAttrF       protowire.Number = 2  // AttributeProto.f (float)
	fAttrI       protowire.Number = 3  // AttributeProto.i (int64)
	fAttrS       protowire.Number = 4  // AttributeProto.s (bytes)
	fAttrT       protowire.Number = 5  // AttributeProto.t (TensorProto)
	fAttrG       protowire.Number = 6  // AttributeProto.g (GraphProto)
	fAttrFloats  protowire.Number = 7  // AttributeProto.floats (repeated float)
	fAttrInts    protowire.Number = 8  // AttributeProto.ints (repeated int64)
	fAttrStrings protowire.Number = 9  // AttributeProto.strings (repeated bytes)
	fAttrType    protowire.Number = 20 // AttributeProto.type (AttributeType)

	// message ValueInfoProto
	fValueInfoName protowire.Number = 1 // ValueInfoProto.name (string)
	fValueInfoType protowire.Number = 2 // ValueInfoProto.type (TypeProto)

	// message TypeProto
	fTypeTensorType protowire.Number = 1 // TypeProto.tensor_type (TypeProto.Tensor)

	// message TypeProto.Tensor
	fTypeTensorElemType protowire.Number = 1 // TypeProto.Tensor.elem_type (int32)
	fTypeTensorShape    protowire.Number = 2 // TypeProto.Tensor.shape (TensorShapeProto)

	// message TensorShapeProto
	fShapeDim protowire.Number = 1 // TensorShapeProto.dim (repeated Dimension)

	// message TensorShapeProto.Dimension
	fDimValue protowire.Number = 1 // TensorShapeProto.Dimension.dim_value (int64)
	fDimParam protowire.Number = 2 // TensorShapeProto.Dimension.dim_param (string)

	// message TensorProto
	fTensorDims     protowire.Number = 1 // TensorProto.dims (repeated int64)
	fTensorDataType protowire.Number = 2 // TensorProto.data_type (int32)
	fTensorName     protowire.Number = 8 // TensorProto.name (string)
	fTensorRawData  protowire.Number = 9 // TensorProto.raw_data (bytes)
)

// AttributeProto.AttributeType enum values.
const (
	attrTypeFloat   = 1 // AttributeProto.AttributeType.FLOAT
	attrTypeInt     = 2 // AttributeProto.AttributeType.INT
	attrTypeString  = 3 // AttributeProto.AttributeType.STRING
	attrTypeTensor  = 4 // AttributeProto.AttributeType.TENSOR
	attrTypeGraph   = 5 // AttributeProto.AttributeType.GRAPH
	attrTypeFloats  = 6 // AttributeProto.AttributeType.FLOATS
	attrTypeInts    = 7 // AttributeProto.AttributeType.INTS
	attrTypeStrings = 8 // AttributeProto.AttributeType.STRINGS
)

// IRVersion is the ONNX IR version written into every model. IR 8 is the
// version that goes with opset 17 (ONNX 1.12) and is read by every ONNX
// Runtime from 1.12 on.
const IRVersion = 8

// DataType is TensorProto.DataType: the element type of a tensor.
type DataType int32

// TensorProto.DataType enum values.
const (
	Float32    DataType = 1  // TensorProto.DataType.FLOAT
	Uint8      DataType = 2  // TensorProto.DataType.UINT8
	Int8       DataType = 3  // TensorProto.DataType.INT8
	Uint16     DataType = 4  // TensorProto.DataType.UINT16
	Int16      DataType = 5  // TensorProto.DataType.INT16
	Int32      DataType = 6  // TensorProto.DataType.INT32
	Int64      DataType = 7  // TensorProto.DataType.INT64
	StringType DataType = 8  // TensorProto.DataType.STRING (String is the attribute)
	Bool       DataType = 9  // TensorProto.DataType.BOOL
	Float16    DataType = 10 // TensorProto.DataType.FLOAT16
	Float64    DataType = 11 // TensorProto.DataType.DOUBLE
	Uint32     DataType = 12 // TensorProto.DataType.UINT32
	Uint64     DataType = 13 // TensorProto.DataType.UINT64
	BFloat16   DataType = 16 // TensorProto.DataType.BFLOAT16
)

// Size is the number of bytes one element of the type occupies in raw_data; 0
// for strings, which have no fixed size.
func (d DataType) Size() int {
	switch d {
	case Uint8, Int8, Bool:
		return 1
	case Float16, BFloat16, Uint16, Int16:
		return 2
	case Float32, Int32, Uint32:
		return 4
	case Int64, Float64, Uint64:
		return 8
	}
	return 0
}

// String returns the ONNX name of the type, as ONNX Runtime prints it.
func (d DataType) String() string {
	switch d {
	case Float32:
		return "float"
	case Uint8:
		return "uint8"
	case Int8:
		return "int8"
	case Int32:
		return "int32"
	case Int64:
		return "int64"
	case Bool:
		return "bool"
	case Float16:
		return "float16"
	case Float64:
		return "double"
	case Uint16:
		return "uint16"
	case Int16:
		return "int16"
	case StringType:
		return "string"
	case Uint32:
		return "uint32"
	case Uint64:
		return "uint64"
	case BFloat16:
		return "bfloat16"
	}
	return "unknown"
}

// Small append helpers over protowire. Each writes one field; a message
// field is written as its length-prefixed encoding.

func appendString(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendVarint(b []byte, num protowire.Number, v int64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(v))
}

func appendFloat(b []byte, num protowire.Number, f float32) []byte {
	b = protowire.AppendTag(b, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, math.Float32bits(f))
}

// appendInts writes a repeated int64 field one element per tag. onnx.proto
// is proto2 syntax and does not mark ints/dims [packed = true], so this is
// the encoding the reference serializer writes (parsers accept both).
func appendInts(b []byte, num protowire.Number, vs []int64) []byte {
	for _, v := range vs {
		b = appendVarint(b, num, v)
	}
	return b
}

// appendFloats writes a repeated float field one element per tag, for the
// same reason as appendInts.
func appendFloats(b []byte, num protowire.Number, vs []float32) []byte {
	for _, v := range vs {
		b = appendFloat(b, num, v)
	}
	return b
}
