module tlscheck

go 1.26
