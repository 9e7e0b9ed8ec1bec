console.log("clm 0.2.0");
