module vetlens

go 1.26.8

require (
	github.com/yalue/onnxruntime_go v1.36.0
	go.etcd.io/bbolt v1.5.0
	gocv.io/x/gocv v0.32.0
	golang.org/x/image v0.47.0
)

require (
	fyne.io/fyne/v2 v2.8.1 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
