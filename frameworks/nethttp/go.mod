module arena/frameworks/nethttp

go 1.26

require github.com/klauspost/compress v1.20.4
