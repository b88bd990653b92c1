package main

import (
	"fmt"

	"github.com/hwtest/hwtest/runtime"
	ort "github.com/yalue/onnxruntime_go"
)

func main() {
	if _, err := runtime.Init(); err != nil {
		panic(err)
	}
	for i := 0; i < 2; i++ {
		c, _ := ort.NewCUDAProviderOptions()
		fmt.Printf("cuda update#%d => %v\n", i, c.Update(map[string]string{"device_id": "0"}))
		t, _ := ort.NewTensorRTProviderOptions()
		fmt.Printf("trt update#%d => %v\n", i, t.Update(map[string]string{"device_id": "0"}))
	}
}
