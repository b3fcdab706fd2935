module vetlens

go 1.26.8

require (
	github.com/google/uuid v1.6.0 // indirect
	github.com/yalue/onnxruntime_go v1.36.0 // indirect
	go.etcd.io/bbolt v1.5.0 // indirect
	gocv.io/x/gocv v0.32.0
	golang.org/x/image v0.47.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
