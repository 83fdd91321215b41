:INPUT
-m recent --rcheck --seconds 10 --reap --hitcount 3 --rttl --name averyveryverylongname --mask 255.255.0.0 --rdest;=;OK
-m recent ! --update --name x;-m recent ! --update --name x --mask 255.255.255.255 --rsource;OK
