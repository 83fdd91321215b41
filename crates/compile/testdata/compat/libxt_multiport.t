:INPUT
-p tcp -m multiport --dports 1,2:3,4,5:6,7,8,9,10,11,12,13,14;=;OK
-p udp -m multiport ! --ports 1:65535;=;OK
-p tcp -m multiport --sports 22;=;OK
