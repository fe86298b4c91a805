module ctxprof.test/labelsets

go 1.17
