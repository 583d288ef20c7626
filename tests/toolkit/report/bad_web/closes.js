document.write("</SCRIPT>");
