package main

import (
	"fmt"
	"os"

	"github.com/hwtest/hwtest/onnx"
	"github.com/hwtest/hwtest/runtime"
	ort "github.com/yalue/onnxruntime_go"
)

func try(name string, data []byte) {
	p := "/tmp/scratch_" + name + ".onnx"
	if data != nil {
		os.WriteFile(p, data, 0o644)
	}
	in, out, err := ort.GetInputOutputInfo(p)
	if err != nil {
		fmt.Printf("%s info => %q\n", name, err.Error())
		return
	}
	var ins, outs []string
	for _, i := range in {
		ins = append(ins, i.Name)
	}
	for _, o := range out {
		outs = append(outs, o.Name)
	}
	s, err := ort.NewDynamicAdvancedSession(p, ins, outs, nil)
	if err != nil {
		fmt.Printf("%s session => %q\n", name, err.Error())
		return
	}
	defer s.Destroy()
	var vals []ort.Value
	for range ins {
		t, _ := ort.NewTensor(ort.NewShape(2), []float32{1, 2})
		vals = append(vals, t)
	}
	o := make([]ort.Value, len(outs))
	err = s.Run(vals, o)
	fmt.Printf("%s run => %v\n", name, err)
}

func main() {
	runtime.Init()
	// unsupported op type on CPU: Det on double
	g := onnx.NewGraph("det")
	x := g.Input("x", onnx.Float64, 2, 2)
	g.Node("Det", []string{x}, []string{"y"})
	g.Output("y", onnx.Float64)
	try("det_double", g.Model().Marshal())
	// unknown op
	g = onnx.NewGraph("foo")
	x = g.Input("x", onnx.Float32, 2)
	g.Node("FooBar", []string{x}, []string{"y"})
	g.Output("y", onnx.Float32, 2)
	try("unknown_op", g.Model().Marshal())
	// opset too new
	g = onnx.NewGraph("relu")
	x = g.Input("x", onnx.Float32, 2)
	g.Node("Relu", []string{x}, []string{"y"})
	g.Output("y", onnx.Float32, 2)
	try("opset99", g.Model(onnx.Opset{Domain: "", Version: 99}).Marshal())
	// OOM
	g = onnx.NewGraph("oom")
	x = g.Input("x", onnx.Float32, 2)
	shape := g.Int64s(1<<20, 1<<20, 1<<4)
	g.Node("ConstantOfShape", []string{shape}, []string{"y"})
	g.Node("Identity", []string{x}, []string{"z"})
	g.Output("y", onnx.Float32, 1<<20, 1<<20, 1<<4)
	g.Output("z", onnx.Float32, 2)
	try("oom", g.Model().Marshal())
	// garbage
	try("garbage", []byte("this is not an onnx model, it was truncated \x00\x01\x02"))
	os.WriteFile("/tmp/scratch_empty.onnx", nil, 0o644)
	try("empty", nil)
	try("missing", nil)
	// wrong input shape
	g = onnx.NewGraph("shape")
	x = g.Input("x", onnx.Float32, 3)
	g.Node("Relu", []string{x}, []string{"y"})
	g.Output("y", onnx.Float32, 3)
	try("shape", g.Model().Marshal())
	// strict: disable cpu fallback on CPU
	opts, _ := ort.NewSessionOptions()
	opts.AddSessionConfigEntry("session.disable_cpu_ep_fallback", "1")
	_, err := ort.NewDynamicAdvancedSession("/tmp/scratch_shape.onnx", []string{"x"}, []string{"y"}, opts)
	fmt.Printf("strict => %v\n", err)
	for _, n := range []string{"WebGPU", "XNNPACK", "WEBNN", "JS", "AZURE", "SNPE", "VitisAI"} {
		o, _ := ort.NewSessionOptions()
		fmt.Printf("append %s => %v\n", n, o.AppendExecutionProvider(n, map[string]string{}))
		o.Destroy()
	}
}
