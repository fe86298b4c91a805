module ctxprof.test/demo

go 1.17
