package onnx

// Marshal encodes the model as an ONNX ModelProto. Fields are written in
// field-number order and every collection in insertion order, so the output
// is a pure function of the build calls.
func (m *Model) Marshal() []byte {
	var b []byte
	b = appendVarint(b, fModelIRVersion, IRVersion)
	if m.ProducerName != "" {
		b = appendString(b, fModelProducerName, m.ProducerName)
	}
	if m.ProducerVersion != "" {
		b = appendString(b, fModelProducerVersion, m.ProducerVersion)
	}
	b = appendString(b, fModelDomain, "")
	b = appendVarint(b, fModelModelVersion, 1)
	if m.Doc != "" {
		b = appendString(b, fModelDocString, m.Doc)
	}
	b = appendBytes(b, fModelGraph, m.Graph.marshal())
	for _, o := range m.Opsets {
		var ob []byte
		ob = appendString(ob, fOpsetDomain, o.Domain)
		ob = appendVarint(ob, fOpsetVersion, o.Version)
		b = appendBytes(b, fModelOpsetImport, ob)
	}
	return b
}

func (g *Graph) marshal() []byte {
	var b []byte
	for _, n := range g.Nodes {
		b = appendBytes(b, fGraphNode, n.marshal())
	}
	b = appendString(b, fGraphName, g.Name)
	for _, t := range g.Inits {
		b = appendBytes(b, fGraphInitializer, t.marshal())
	}
	if g.Doc != "" {
		b = appendString(b, fGraphDocString, g.Doc)
	}
	for _, v := range g.Inputs {
		b = appendBytes(b, fGraphInput, v.marshal())
	}
	for _, v := range g.Outputs {
		b = appendBytes(b, fGraphOutput, v.marshal())
	}
	return b
}

func (n *Node) marshal() []byte {
	var b []byte
	for _, in := range n.Inputs {
		b = appendString(b, fNodeInput, in)
	}
	for _, out := range n.Outputs {
		b = appendString(b, fNodeOutput, out)
	}
	if n.Name != "" {
		b = appendString(b, fNodeName, n.Name)
	}
	b = appendString(b, fNodeOpType, n.OpType)
	for _, a := range n.Attrs {
		b = appendBytes(b, fNodeAttribute, a.marshal())
	}
	if n.Domain != "" {
		b = appendString(b, fNodeDomain, n.Domain)
	}
	return b
}

func (a *Attr) marshal() []byte {
	var b []byte
	b = appendString(b, fAttrName, a.name)
	switch a.typ {
	case attrTypeFloat:
		b = appendFloat(b, fAttrF, a.f)
	case attrTypeInt:
		b = appendVarint(b, fAttrI, a.i)
	case attrTypeString:
		b = appendString(b, fAttrS, a.s)
	case attrTypeTensor:
		b = appendBytes(b, fAttrT, a.t.marshal())
	case attrTypeGraph:
		b = appendBytes(b, fAttrG, a.g.marshal())
	case attrTypeFloats:
		b = appendFloats(b, fAttrFloats, a.floats)
	case attrTypeInts:
		b = appendInts(b, fAttrInts, a.ints)
	}
	b = appendVarint(b, fAttrType, int64(a.typ))
	return b
}

func (t *Tensor) marshal() []byte {
	var b []byte
	b = appendInts(b, fTensorDims, t.Dims)
	b = appendVarint(b, fTensorDataType, int64(t.Type))
	if t.Name != "" {
		b = appendString(b, fTensorName, t.Name)
	}
	if t.Type == StringType {
		for _, s := range t.Strings {
			b = appendString(b, fTensorStringData, s)
		}
		return b
	}
	b = appendBytes(b, fTensorRawData, t.Raw)
	return b
}

func (v *ValueInfo) marshal() []byte {
	var shape []byte
	for _, d := range v.Dims {
		var db []byte
		if d.Param != "" {
			db = appendString(db, fDimParam, d.Param)
		} else {
			db = appendVarint(db, fDimValue, d.Value)
		}
		shape = appendBytes(shape, fShapeDim, db)
	}
	var tt []byte
	tt = appendVarint(tt, fTypeTensorElemType, int64(v.Type))
	if !v.Unranked {
		tt = appendBytes(tt, fTypeTensorShape, shape)
	}
	var typ []byte
	typ = appendBytes(typ, fTypeTensorType, tt)

	var b []byte
	b = appendString(b, fValueInfoName, v.Name)
	b = appendBytes(b, fValueInfoType, typ)
	return b
}
