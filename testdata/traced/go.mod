module ctxprof.test/traced

go 1.17
