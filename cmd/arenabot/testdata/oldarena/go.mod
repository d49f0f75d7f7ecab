module go-fasthttp-oldarena

go 1.26.0

require github.com/valyala/fasthttp v1.70.0

require (
	github.com/andybalholm/brotli v1.2.1 // indirect
	github.com/klauspost/compress v1.18.5 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
)
